/** The official `openai` SDK works against `/api/ai` with the project API key in `SERVICE_API_KEY`. */
import OpenAI, { toFile } from "openai"
import { parseSync } from "subtitle"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fakeAudio } from "../fakes/voice-server.ts"
import { type Gateway, startGateway } from "../harness.ts"
import { startVoiceFakes, type VoiceFakes, voiceEnv } from "./setup.ts"

let fakes: VoiceFakes
let gw: Gateway
let client: OpenAI

beforeAll(async () => {
  fakes = await startVoiceFakes()
  gw = await startGateway({ env: voiceEnv(fakes) })
  client = new OpenAI({
    apiKey: "not-used-by-the-gateway",
    baseURL: `${gw.baseUrl}/api/ai`,
    defaultHeaders: { SERVICE_API_KEY: gw.project.apiKey },
    maxRetries: 0
  })
})
afterAll(async () => {
  await gw?.close()
  await fakes?.close()
})

describe("openai SDK", () => {
  it("audio.speech.create returns the audio", async () => {
    const response = await client.audio.speech.create({ model: "tts-1", voice: "echo", input: "From the SDK", response_format: "wav" })
    expect(response.headers.get("content-type")).toBe("audio/wav")
    expect(response.headers.get("x-provider")).toBe("openai")
    const audio = Buffer.from(await response.arrayBuffer())
    expect(audio.equals(fakeAudio("openai:tts-1:echo:wav:From the SDK", 4096))).toBe(true)
  })

  it("audio.speech.create can ask for other providers' models through the same call", async () => {
    const response = await client.audio.speech.create({ model: "aura-asteria-en", voice: "alloy", input: "Aura" })
    expect(response.headers.get("x-provider")).toBe("deepgram")
    expect((await response.arrayBuffer()).byteLength).toBe(4096)
  })

  it("audio.transcriptions.create returns {text}, verbose_json and subtitles", async () => {
    const file = await toFile(Buffer.alloc(1024, 3), "speech.webm", { type: "audio/webm" })
    const json = await client.audio.transcriptions.create({ file, model: "whisper-1" })
    expect(json.text).toBe("Hello there. How are you today?")

    const verbose = await client.audio.transcriptions.create({
      file: await toFile(Buffer.alloc(1024, 3), "speech.webm", { type: "audio/webm" }),
      model: "whisper-1",
      response_format: "verbose_json",
      timestamp_granularities: ["word", "segment"]
    })
    expect(verbose.duration).toBe(9.5)
    expect(verbose.segments?.[1]?.text).toBe("How are you today?")
    expect(verbose.words?.[0]).toEqual({ word: "Hello", start: 0, end: 0.6 })

    const srt = await client.audio.transcriptions.create({
      file: await toFile(Buffer.alloc(1024, 3), "speech.mp3"),
      model: "whisper-1",
      response_format: "srt"
    })
    expect(parseSync(String(srt)).filter((n) => n.type === "cue")).toHaveLength(2)
  })

  it("errors arrive as APIError with the status and the flat envelope's code", async () => {
    const error = await client.audio.speech.create({ model: "tts-1", voice: "alloy", input: "x".repeat(4097) }).then(
      () => undefined,
      (e: unknown) => e
    )
    expect(error).toBeInstanceOf(OpenAI.APIError)
    if (!(error instanceof OpenAI.APIError)) return
    expect(error.status).toBe(400)
    // The SDK surfaces the body's `error` field: in the flat envelope, the code.
    expect(error.error).toBe("bad_request")
    expect(error.requestID).toMatch(/^req_/)
  })
})
