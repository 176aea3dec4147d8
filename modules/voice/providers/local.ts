/**
 * Local speech with `espeak-ng`: the text goes in on stdin (never on the command line), WAV comes out on stdout and
 * is streamed as it is produced. The `Upstream.baseUrl` of the local provider is the binary's path. espeak-ng
 * writes a 44-byte WAV header with placeholder sizes: raw PCM drops it, a buffered WAV gets the real sizes.
 */
import { Effect } from "effect"
import * as ChildProcess from "node:child_process"
import { UpstreamError } from "../upstream.ts"
import type { SpeechAdapter } from "./types.ts"

const WAV_HEADER_BYTES = 44
const DEFAULT_WORDS_PER_MINUTE = 175

const failed = (message: string) => new UpstreamError({ provider: "local", kind: "failed", status: null, message })

/** Whether `espeak-ng` at `path` runs here. */
export const espeakAvailable = (path: string) =>
  Effect.async<boolean>((resume) => {
    const child = ChildProcess.execFile(path, ["--version"], { timeout: 5000 }, (error) => resume(Effect.succeed(error === null)))
    return Effect.sync(() => child.kill())
  })

const args = (voice: string, speed: number | undefined) => {
  const wpm = Math.round(Math.min(450, Math.max(80, DEFAULT_WORDS_PER_MINUTE * (speed ?? 1))))
  return ["--stdout", "-b", "1", "-v", voice, "-s", String(wpm)]
}

/** The WAV with its RIFF and data sizes filled in. */
const withSizes = (wav: Buffer) => {
  if (wav.length < WAV_HEADER_BYTES || wav.toString("ascii", 0, 4) !== "RIFF") return wav
  wav.writeUInt32LE(wav.length - 8, 4)
  wav.writeUInt32LE(wav.length - WAV_HEADER_BYTES, 40)
  return wav
}

export const localSpeech: SpeechAdapter = (upstream, request) =>
  Effect.async<Response, UpstreamError>((resume) => {
    const child = ChildProcess.spawn(upstream.baseUrl, args(request.voice ?? "en", request.speed), {
      stdio: ["pipe", "pipe", "ignore"]
    })
    let skip = request.format === "pcm" ? WAV_HEADER_BYTES : 0
    let settled = false
    const chunks: Array<Buffer> = []
    child.once("error", (error) => {
      if (!settled) resume(Effect.fail(failed(`espeak-ng did not start: ${error.message}`)))
      settled = true
    })
    child.stdin.end(request.input, "utf8")

    if (!request.stream) {
      child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk))
      child.once("close", (code) => {
        if (settled) return
        settled = true
        if (code !== 0) return resume(Effect.fail(failed(`espeak-ng exited with code ${code}`)))
        const audio = Buffer.concat(chunks)
        const body = request.format === "pcm" ? audio.subarray(WAV_HEADER_BYTES) : withSizes(audio)
        resume(Effect.succeed(new Response(new Uint8Array(body), { status: 200 })))
      })
      return Effect.sync(() => child.kill())
    }

    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        child.stdout.on("data", (chunk: Buffer) => {
          const data = skip > 0 ? chunk.subarray(Math.min(skip, chunk.length)) : chunk
          skip = Math.max(0, skip - chunk.length)
          if (data.length > 0) controller.enqueue(new Uint8Array(data))
        })
        child.once("close", (code) => (code === 0 ? controller.close() : controller.error(failed(`espeak-ng exited with code ${code}`))))
      },
      cancel() {
        child.kill()
      }
    })
    settled = true
    resume(Effect.succeed(new Response(body, { status: 200 })))
    return Effect.sync(() => child.kill())
  })
