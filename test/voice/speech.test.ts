import * as Http from "node:http"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { fakeAudio } from "../fakes/voice-server.ts"
import { type Gateway, startGateway } from "../harness.ts"
import { speak, startVoiceFakes, type VoiceFakes, voiceEnv } from "./setup.ts"

let fakes: VoiceFakes
let gw: Gateway

beforeAll(async () => {
  fakes = await startVoiceFakes()
  gw = await startGateway({ env: voiceEnv(fakes) })
})
afterAll(async () => {
  await gw?.close()
  await fakes?.close()
})
beforeEach(() => fakes.reset())

const lastJson = (fake: { requests: Array<{ body: Buffer }> }) =>
  JSON.parse(fake.requests[fake.requests.length - 1]?.body.toString("utf8") ?? "{}") as Record<string, unknown>

describe("text-to-speech: buffered answers", () => {
  it("defaults to tts-1, voice alloy and mp3, answering raw audio with audio/mpeg, X-Provider, X-Request-Id and Content-Length", async () => {
    const res = await speak(gw.baseUrl, gw.project.apiKey, { input: "Hello world" })
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toBe("audio/mpeg")
    expect(res.headers.get("x-provider")).toBe("openai")
    expect(res.headers.get("x-request-id")).toMatch(/^req_/)
    expect(res.headers.get("x-stream")).toBeNull()
    expect(Number(res.headers.get("content-length"))).toBe(res.bytes.length)
    expect(res.bytes.equals(fakeAudio("openai:tts-1:alloy:mp3:Hello world", 4096))).toBe(true)
    const upstream = fakes.openai.requests[0]
    expect(upstream?.path).toBe("/audio/speech")
    expect(upstream?.headers.authorization).toBe("Bearer test-key")
    expect(lastJson(fakes.openai)).toEqual({ model: "tts-1", input: "Hello world", voice: "alloy", response_format: "mp3" })
  })

  it("echoes a caller's X-Request-Id", async () => {
    const res = await fetch(`${gw.baseUrl}/api/ai/audio/speech`, {
      method: "POST",
      headers: { SERVICE_API_KEY: gw.project.apiKey, "content-type": "application/json", "x-request-id": "trace-123" },
      body: JSON.stringify({ input: "hi" })
    })
    expect(res.status).toBe(200)
    expect(res.headers.get("x-request-id")).toBe("trace-123")
  })

  it.each([
    ["mp3", "audio/mpeg"],
    ["opus", "audio/opus"],
    ["aac", "audio/aac"],
    ["flac", "audio/flac"],
    ["wav", "audio/wav"],
    ["pcm", "audio/pcm"]
  ])("response_format %s is served as %s", async (format, contentType) => {
    const res = await speak(gw.baseUrl, gw.project.apiKey, { input: "x", model: "tts-1-hd", voice: "nova", response_format: format, speed: 1.5 })
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toBe(contentType)
    expect(lastJson(fakes.openai)).toMatchObject({ model: "tts-1-hd", voice: "nova", response_format: format, speed: 1.5 })
  })

  it("aura models go to Deepgram /v1/speak with the format mapped to encoding and container", async () => {
    const cases = [
      ["mp3", { encoding: "mp3", container: null }],
      ["wav", { encoding: "linear16", container: "wav" }],
      ["pcm", { encoding: "linear16", container: "none" }],
      ["opus", { encoding: "opus", container: "ogg" }],
      ["flac", { encoding: "flac", container: null }],
      ["aac", { encoding: "aac", container: null }]
    ] as const
    for (const [format, expected] of cases) {
      const res = await speak(gw.baseUrl, gw.project.apiKey, { input: "Hi", model: "aura-luna-en", response_format: format })
      expect(res.status).toBe(200)
      expect(res.headers.get("x-provider")).toBe("deepgram")
      const upstream = fakes.deepgram.requests[fakes.deepgram.requests.length - 1]
      expect(upstream?.headers.authorization).toBe("Token test-key")
      expect(upstream?.query.get("model")).toBe("aura-luna-en")
      expect(upstream?.query.get("encoding")).toBe(expected.encoding)
      expect(upstream?.query.get("container")).toBe(expected.container)
      expect(lastJson(fakes.deepgram)).toEqual({ text: "Hi" })
    }
  })

  it("sonic models go to Cartesia /tts/bytes with a version header, a voice id and a structured output format", async () => {
    const res = await speak(gw.baseUrl, gw.project.apiKey, { input: "Hi", model: "sonic-2", response_format: "pcm" })
    expect(res.status).toBe(200)
    expect(res.headers.get("x-provider")).toBe("cartesia")
    expect(res.headers.get("content-type")).toBe("audio/pcm")
    const upstream = fakes.cartesia.requests[0]
    expect(upstream?.headers["cartesia-version"]).toBeTruthy()
    expect(lastJson(fakes.cartesia)).toEqual({
      model_id: "sonic-2",
      transcript: "Hi",
      voice: { mode: "id", id: "694f9389-aac1-45b6-b726-9d9369183238" },
      output_format: { container: "raw", encoding: "pcm_s16le", sample_rate: 24000 }
    })
  })

  it("ElevenLabs models put the voice id in the path and the format in output_format", async () => {
    const res = await speak(gw.baseUrl, gw.project.apiKey, { input: "Hi", model: "eleven_flash_v2_5", response_format: "opus" })
    expect(res.status).toBe(200)
    expect(res.headers.get("x-provider")).toBe("elevenlabs")
    expect(res.headers.get("content-type")).toBe("audio/opus")
    const upstream = fakes.elevenlabs.requests[0]
    expect(upstream?.path).toBe("/v1/text-to-speech/21m00Tcm4TlvDq8ikWAM")
    expect(upstream?.query.get("output_format")).toBe("opus_48000_128")
    expect(upstream?.headers["xi-api-key"]).toBe("test-key")
    expect(lastJson(fakes.elevenlabs)).toEqual({ text: "Hi", model_id: "eleven_flash_v2_5" })
  })

  it("regional-tts goes to Spitch with the voice's language, and a language picks a voice that speaks it", async () => {
    const res = await speak(gw.baseUrl, gw.project.apiKey, { input: "Ẹ kú àárọ̀", model: "regional-tts", response_format: "wav" })
    expect(res.status).toBe(200)
    expect(res.headers.get("x-provider")).toBe("spitch")
    expect(res.headers.get("content-type")).toBe("audio/wav")
    expect(lastJson(fakes.spitch)).toEqual({ text: "Ẹ kú àárọ̀", voice: "sade", language: "yo", format: "wav" })

    await speak(gw.baseUrl, gw.project.apiKey, { input: "Sannu", model: "regional-tts", language: "ha", response_format: "opus" })
    expect(lastJson(fakes.spitch)).toMatchObject({ voice: "amina", language: "ha", format: "ogg_opus" })

    await speak(gw.baseUrl, gw.project.apiKey, { input: "Hello", model: "regional-tts", voice: "henry" })
    expect(lastJson(fakes.spitch)).toMatchObject({ voice: "henry", language: "en", format: "mp3" })
  })

  it("a voice not belonging to the resolved model falls back to the model's default voice", async () => {
    await speak(gw.baseUrl, gw.project.apiKey, { input: "a", voice: "sade" })
    expect(lastJson(fakes.openai)).toMatchObject({ voice: "alloy" })
    await speak(gw.baseUrl, gw.project.apiKey, { input: "a", model: "regional-tts", voice: "alloy" })
    expect(lastJson(fakes.spitch)).toMatchObject({ voice: "sade" })
    await speak(gw.baseUrl, gw.project.apiKey, { input: "a", model: "sonic-english", voice: "nova" })
    expect(lastJson(fakes.cartesia)).toMatchObject({ voice: { mode: "id", id: "694f9389-aac1-45b6-b726-9d9369183238" } })
    await speak(gw.baseUrl, gw.project.apiKey, { input: "a", model: "sonic-2", voice: "11111111-2222-4333-8444-555555555555" })
    expect(lastJson(fakes.cartesia)).toMatchObject({ voice: { id: "11111111-2222-4333-8444-555555555555" } })
    await speak(gw.baseUrl, gw.project.apiKey, { input: "a", model: "eleven_multilingual_v2", voice: "alloy" })
    expect(fakes.elevenlabs.requests[fakes.elevenlabs.requests.length - 1]?.path).toBe("/v1/text-to-speech/21m00Tcm4TlvDq8ikWAM")
    await speak(gw.baseUrl, gw.project.apiKey, { input: "a", model: "eleven_turbo_v2_5", voice: "AbCdEfGhIjKlMnOpQrSt" })
    expect(fakes.elevenlabs.requests[fakes.elevenlabs.requests.length - 1]?.path).toBe("/v1/text-to-speech/AbCdEfGhIjKlMnOpQrSt")
  })
})

describe("text-to-speech: request rules (400 bad_request in the flat envelope)", () => {
  const rejects = async (body: unknown, param: string | undefined) => {
    const res = await speak(gw.baseUrl, gw.project.apiKey, body)
    expect(res.status).toBe(400)
    expect(res.json?.error).toBe("bad_request")
    expect(typeof res.json?.message).toBe("string")
    expect(res.json?.request_id).toBe(res.headers.get("x-request-id"))
    expect(res.json?.param).toBe(param)
    return res
  }

  it("input may have 4096 characters, not 4097", async () => {
    expect((await speak(gw.baseUrl, gw.project.apiKey, { input: "a".repeat(4096) })).status).toBe(200)
    await rejects({ input: "a".repeat(4097) }, "input")
  })

  it("input counts characters, not UTF-16 units: 4096 emoji are accepted", async () => {
    expect((await speak(gw.baseUrl, gw.project.apiKey, { input: "🙂".repeat(4096) })).status).toBe(200)
  })

  it("input is required", async () => {
    await rejects({}, "input")
    await rejects({ input: "" }, "input")
    await rejects({ input: 42 }, "input")
  })

  it("speed may be 0.25 to 4.0 inclusive", async () => {
    expect((await speak(gw.baseUrl, gw.project.apiKey, { input: "a", speed: 0.25 })).status).toBe(200)
    expect((await speak(gw.baseUrl, gw.project.apiKey, { input: "a", speed: 4.0 })).status).toBe(200)
    await rejects({ input: "a", speed: 0.24 }, "speed")
    await rejects({ input: "a", speed: 4.01 }, "speed")
    await rejects({ input: "a", speed: "fast" }, "speed")
  })

  it("an unknown model, an unknown format and a format the provider cannot produce are rejected before any upstream call", async () => {
    await rejects({ input: "a", model: "tts-9" }, "model")
    await rejects({ input: "a", response_format: "ogg" }, "response_format")
    await rejects({ input: "a", model: "sonic-2", response_format: "flac" }, "response_format")
    await rejects({ input: "a", model: "eleven_flash_v2_5", response_format: "aac" }, "response_format")
    await rejects({ input: "a", model: "regional-tts", response_format: "aac" }, "response_format")
    expect(fakes.cartesia.requests.length + fakes.elevenlabs.requests.length + fakes.spitch.requests.length).toBe(0)
  })

  it("the regional provider accepts only en, yo, ha, ig and am", async () => {
    await rejects({ input: "a", model: "regional-tts", language: "fr" }, "language")
    for (const language of ["en", "yo", "ha", "ig", "am"]) {
      expect((await speak(gw.baseUrl, gw.project.apiKey, { input: "a", model: "regional-tts", language })).status).toBe(200)
    }
  })

  it("stream must be a boolean and the body must be a JSON object", async () => {
    await rejects({ input: "a", stream: "yes" }, "stream")
    await rejects([1, 2], undefined)
    await rejects("{not json", undefined)
  })

  it("a missing or wrong SERVICE_API_KEY is a 401 in the flat envelope", async () => {
    const res = await speak(gw.baseUrl, "sak_wrong", { input: "a" })
    expect(res.status).toBe(401)
    expect(res.json).toMatchObject({ error: "unauthorized" })
    const none = await fetch(`${gw.baseUrl}/api/ai/audio/speech`, { method: "POST", body: "{}", headers: { "content-type": "application/json" } })
    expect(none.status).toBe(401)
  })
})

describe("text-to-speech: streaming", () => {
  /** Reads a streamed gateway answer with node:http so chunk arrival is observable. */
  const openStream = (body: unknown) =>
    new Promise<Http.IncomingMessage>((resolve, reject) => {
      const request = Http.request(`${gw.baseUrl}/api/ai/audio/speech`, {
        method: "POST",
        headers: { SERVICE_API_KEY: gw.project.apiKey, "content-type": "application/json" }
      }, resolve)
      request.on("error", reject)
      request.end(JSON.stringify(body))
    })

  it("pipes audio through as it arrives: chunked, X-Stream true, no Content-Length, chunks before the upstream finishes", async () => {
    fakes.openai.audio.chunks = 4
    fakes.openai.audio.chunkDelayMs = 30
    const hold = fakes.openai.holdLastChunk()
    const response = await openStream({ input: "Streaming", stream: true, response_format: "opus" })
    expect(response.statusCode).toBe(200)
    expect(response.headers["x-stream"]).toBe("true")
    expect(response.headers["transfer-encoding"]).toBe("chunked")
    expect(response.headers["content-length"]).toBeUndefined()
    expect(response.headers["content-type"]).toBe("audio/opus")
    expect(response.headers["x-provider"]).toBe("openai")
    expect(response.headers["x-request-id"]).toMatch(/^req_/)

    const received: Array<Buffer> = []
    let chunkEvents = 0
    response.on("data", (chunk: Buffer) => {
      received.push(chunk)
      chunkEvents += 1
    })
    const ended = new Promise<void>((resolve) => response.on("end", () => resolve()))
    await hold.reachedHold
    const expected = fakeAudio("openai:tts-1:alloy:opus:Streaming", 4096)
    // Three of four chunks reach the client while the upstream still holds its last one.
    const deadline = Date.now() + 5000
    while (Buffer.concat(received).length < 3072 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
    expect(Buffer.concat(received).length).toBe(3072)
    expect(fakes.openai.inFlight()).toBe(1)
    expect(chunkEvents).toBeGreaterThanOrEqual(1)
    hold.release()
    await ended
    expect(Buffer.concat(received).equals(expected)).toBe(true)
  })

  it("ElevenLabs streams through its /stream endpoint", async () => {
    const response = await openStream({ input: "Hi", model: "eleven_turbo_v2_5", stream: true, response_format: "mp3" })
    const chunks: Array<Buffer> = []
    for await (const chunk of response) chunks.push(chunk as Buffer)
    expect(response.headers["x-stream"]).toBe("true")
    expect(fakes.elevenlabs.requests[0]?.path).toBe("/v1/text-to-speech/21m00Tcm4TlvDq8ikWAM/stream")
    expect(Buffer.concat(chunks).length).toBe(4096)
  })

  it("validation and upstream refusals come before the first byte, with their own status", async () => {
    const invalid = await speak(gw.baseUrl, gw.project.apiKey, { input: "a", stream: true, speed: 9 })
    expect(invalid.status).toBe(400)
    expect(invalid.headers.get("x-stream")).toBeNull()
    fakes.deepgram.failure = { status: 500, body: { err_code: "INTERNAL", err_msg: "boom", request_id: "x" } }
    const failed = await speak(gw.baseUrl, gw.project.apiKey, { input: "a", model: "aura-asteria-en", stream: true })
    expect(failed.status).toBe(502)
    expect(failed.json).toMatchObject({ error: "provider_error", provider: "deepgram", upstream_status: 500 })
  })
})

describe("text-to-speech: upstream failures", () => {
  it("a provider refusing the input is a 400 provider_error carrying the provider's message", async () => {
    fakes.openai.failure = { status: 400, body: { error: { message: "Input contains disallowed content", type: "invalid_request_error", param: "input", code: null } } }
    const res = await speak(gw.baseUrl, gw.project.apiKey, { input: "a" })
    expect(res.status).toBe(400)
    expect(res.json).toMatchObject({ error: "provider_error", provider: "openai", upstream_status: 400 })
    expect(String(res.json?.message)).toContain("Input contains disallowed content")
  })

  it("a provider failing (5xx, bad key, rate limit) is a 502 provider_error", async () => {
    fakes.spitch.failure = { status: 503, body: { error: { message: "overloaded", type: "server_error", code: "unavailable" } } }
    expect((await speak(gw.baseUrl, gw.project.apiKey, { input: "a", model: "regional-tts" })).status).toBe(502)
    fakes.cartesia.keys.delete("test-key")
    try {
      const res = await speak(gw.baseUrl, gw.project.apiKey, { input: "a", model: "sonic-2" })
      expect(res.status).toBe(502)
      expect(String(res.json?.message)).toContain("Invalid API key")
    } finally {
      fakes.cartesia.keys.add("test-key")
    }
    fakes.elevenlabs.failure = { status: 429, body: { detail: { status: "too_many_concurrent_requests", message: "slow down" } } }
    expect((await speak(gw.baseUrl, gw.project.apiKey, { input: "a", model: "eleven_flash_v2_5" })).status).toBe(502)
  })

  it("ElevenLabs validation errors and Cartesia's sunset of sonic-english are surfaced faithfully", async () => {
    fakes.elevenlabs.failure = { status: 422, body: { detail: [{ loc: ["body", "text"], msg: "text too long", type: "value_error" }] } }
    const eleven = await speak(gw.baseUrl, gw.project.apiKey, { input: "a", model: "eleven_flash_v2_5" })
    expect(eleven.status).toBe(400)
    expect(String(eleven.json?.message)).toContain("text too long")
    fakes.cartesia.sunsetSonicEnglish = true
    try {
      const sunset = await speak(gw.baseUrl, gw.project.apiKey, { input: "a", model: "sonic-english" })
      expect(sunset.status).toBe(400)
      expect(sunset.json).toMatchObject({ error: "provider_error", provider: "cartesia" })
      expect(String(sunset.json?.message)).toContain("sonic-english is no longer available")
    } finally {
      fakes.cartesia.sunsetSonicEnglish = false
    }
  })

  it("an upstream failure is logged with provider and status, never with a key or the input", async () => {
    fakes.deepgram.failure = { status: 503, body: { err_code: "UNAVAILABLE", err_msg: "try later", request_id: "x" } }
    const res = await speak(gw.baseUrl, gw.project.apiKey, { input: "secret words", model: "aura-orion-en" })
    expect(res.status).toBe(502)
    const line = gw.logs.find((l) => l.includes("voice upstream call failed") && l.includes(res.headers.get("x-request-id") ?? "?"))
    expect(line).toBeDefined()
    expect(line).toContain("deepgram")
    expect(line).toContain("503")
    const all = gw.logs.join("\n")
    expect(all).not.toContain("test-key")
    expect(all).not.toContain(gw.project.apiKey)
    expect(all).not.toContain("secret words")
  })

  it("a provider that does not answer within the provider timeout is a 502 provider_error", async () => {
    fakes.openai.delayMs = 8000
    const started = Date.now()
    const res = await speak(gw.baseUrl, gw.project.apiKey, { input: "a" })
    expect(res.status).toBe(502)
    expect(res.json).toMatchObject({ error: "provider_error", provider: "openai" })
    expect(String(res.json?.message)).toContain("no answer within 5 seconds")
    expect(Date.now() - started).toBeGreaterThanOrEqual(4900)
    expect(Date.now() - started).toBeLessThan(7900)
  })
})
