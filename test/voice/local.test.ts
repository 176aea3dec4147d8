/** The keyless local TTS model (`espeak-ng`): used when the binary runs, absent otherwise. */
import * as ChildProcess from "node:child_process"
import { parseBuffer } from "music-metadata"
import * as Http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Gateway, startGateway } from "../harness.ts"
import { bearer, call } from "../http.ts"
import { speak, startVoiceFakes, type VoiceFakes, voiceEnv } from "./setup.ts"

const hasEspeak = ChildProcess.spawnSync("espeak-ng", ["--version"]).status === 0

let fakes: VoiceFakes
let keyless: Gateway

beforeAll(async () => {
  fakes = await startVoiceFakes()
  keyless = await startGateway({ env: voiceEnv(fakes, []) })
})
afterAll(async () => {
  await keyless?.close()
  await fakes?.close()
})

const models = async (gw: Gateway) =>
  ((await (await fetch(`${gw.baseUrl}/api/ai/audio/voices`)).json()) as { data: Array<{ model: string; provider: string }> }).data

describe.skipIf(!hasEspeak)("espeak-ng installed", () => {
  it("is listed in the registry as the local provider with wav and pcm", async () => {
    const entry = (await models(keyless)).find((m) => m.model === "espeak-ng")
    expect(entry).toMatchObject({ provider: "local", formats: ["wav", "pcm"], default_voice: "en" })
  })

  it("speaks real WAV without any provider key, with correct RIFF sizes", async () => {
    const res = await speak(keyless.baseUrl, keyless.project.apiKey, { input: "Hello from the gateway", model: "espeak-ng", response_format: "wav" })
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toBe("audio/wav")
    expect(res.headers.get("x-provider")).toBe("local")
    expect(res.bytes.toString("ascii", 0, 4)).toBe("RIFF")
    expect(res.bytes.readUInt32LE(4)).toBe(res.bytes.length - 8)
    const metadata = await parseBuffer(res.bytes, { mimeType: "audio/wav" })
    expect(metadata.format.container).toBe("WAVE")
    expect(metadata.format.sampleRate).toBe(22050)
    expect(metadata.format.duration ?? 0).toBeGreaterThan(0.5)
  })

  it("pcm is the raw samples without the WAV header", async () => {
    const res = await speak(keyless.baseUrl, keyless.project.apiKey, { input: "Hello", model: "espeak-ng", response_format: "pcm" })
    expect(res.headers.get("content-type")).toBe("audio/pcm")
    expect(res.bytes.toString("ascii", 0, 4)).not.toBe("RIFF")
    expect(res.bytes.length % 2).toBe(0)
    expect(res.bytes.length).toBeGreaterThan(1000)
  })

  it("streams as espeak-ng produces it", async () => {
    const response = await new Promise<Http.IncomingMessage>((resolve) => {
      const request = Http.request(`${keyless.baseUrl}/api/ai/audio/speech`, {
        method: "POST",
        headers: { SERVICE_API_KEY: keyless.project.apiKey, "content-type": "application/json" }
      }, resolve)
      request.end(JSON.stringify({ input: "Streaming local speech", model: "espeak-ng", response_format: "wav", stream: true }))
    })
    const chunks: Array<Buffer> = []
    for await (const chunk of response) chunks.push(chunk as Buffer)
    expect(response.headers["x-stream"]).toBe("true")
    expect(response.headers["content-length"]).toBeUndefined()
    expect(Buffer.concat(chunks).toString("ascii", 0, 4)).toBe("RIFF")
  })

  it("answers a request without a model when the general-purpose provider has no key (WAV by default)", async () => {
    const res = await speak(keyless.baseUrl, keyless.project.apiKey, { input: "No keys needed" })
    expect(res.status).toBe(200)
    expect(res.headers.get("x-provider")).toBe("local")
    expect(res.headers.get("content-type")).toBe("audio/wav")
    // An explicit model, or a format the local model cannot make, still needs the provider's key.
    const explicit = await speak(keyless.baseUrl, keyless.project.apiKey, { input: "a", model: "tts-1" })
    expect(explicit.json).toMatchObject({ error: "provider_not_configured", provider: "openai" })
    const mp3 = await speak(keyless.baseUrl, keyless.project.apiKey, { input: "a", response_format: "mp3" })
    expect(mp3.json).toMatchObject({ error: "provider_not_configured", provider: "openai" })
  })

  it("records usage with key source local and no cost", async () => {
    const project = await keyless.createProject()
    await speak(keyless.baseUrl, project.apiKey, { input: "abc", model: "espeak-ng", response_format: "wav" })
    const rows = (await call(keyless.baseUrl, "GET", "/v1/usage", { headers: bearer(project.secretKey) })).body as {
      data: Array<{ key_source: string; provider: string; cost: { providerCostUsd: number } }>
    }
    expect(rows.data[0]).toMatchObject({ key_source: "local", provider: "local", cost: { providerCostUsd: 0 } })
  })
})

describe("espeak-ng not available", () => {
  it("the local model is not offered and the default model needs its provider key", async () => {
    const gw = await startGateway({ env: { ...voiceEnv(fakes, []), VOICE_ESPEAK_PATH: "/nonexistent/espeak-ng" } })
    try {
      expect((await models(gw)).some((m) => m.provider === "local")).toBe(false)
      const res = await speak(gw.baseUrl, gw.project.apiKey, { input: "a" })
      expect(res.status).toBe(400)
      expect(res.json).toMatchObject({ error: "provider_not_configured", provider: "openai" })
      const local = await speak(gw.baseUrl, gw.project.apiKey, { input: "a", model: "espeak-ng" })
      expect(local.json).toMatchObject({ error: "bad_request", param: "model" })
    } finally {
      await gw.close()
    }
  })
})
