/** The public voice registry (no auth) and the rule that validation accepts exactly what it advertises. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { type Gateway, startGateway } from "../harness.ts"
import { speak, startVoiceFakes, transcribe, type VoiceFakes, voiceEnv } from "./setup.ts"

let fakes: VoiceFakes
let gw: Gateway

beforeAll(async () => {
  fakes = await startVoiceFakes()
  for (const fake of [fakes.openai, fakes.deepgram, fakes.cartesia, fakes.elevenlabs, fakes.spitch]) {
    fake.audio.chunks = 1
    fake.audio.size = 32
  }
  gw = await startGateway({ env: voiceEnv(fakes) })
})
afterAll(async () => {
  await gw?.close()
  await fakes?.close()
})
beforeEach(() => {
  fakes.reset()
  for (const fake of [fakes.openai, fakes.deepgram, fakes.cartesia, fakes.elevenlabs, fakes.spitch]) fake.audio.chunks = 1
})

interface VoiceEntry {
  readonly model: string
  readonly provider: string
  readonly voices: Array<string>
  readonly default_voice: string | null
  readonly formats: Array<string>
  readonly max_input_chars: number
}
interface SpeechModelEntry {
  readonly id: string
  readonly provider: string
  readonly formats: Array<string>
  readonly voices: Array<string>
  readonly default_voice: string | null
  readonly supports_streaming: boolean
  readonly max_input_chars: number
  readonly pricing: Record<string, unknown>
}

const get = async <A>(path: string) => {
  const res = await fetch(gw.baseUrl + path)
  expect(res.status).toBe(200)
  return (await res.json()) as A
}

describe("GET /api/ai/audio/voices", () => {
  it("lists every TTS model of the contract with its voices, default voice, formats and input limit, without auth", async () => {
    const registry = await get<{ object: string; data: Array<VoiceEntry> }>("/api/ai/audio/voices")
    expect(registry.object).toBe("list")
    const byModel = new Map(registry.data.map((entry) => [entry.model, entry]))
    for (const id of ["tts-1", "tts-1-hd"]) {
      expect(byModel.get(id)).toMatchObject({
        provider: "openai",
        voices: ["alloy", "echo", "fable", "onyx", "nova", "shimmer"],
        default_voice: "alloy",
        formats: ["mp3", "opus", "aac", "flac", "wav", "pcm"],
        max_input_chars: 4096
      })
    }
    for (const id of ["aura-asteria-en", "aura-luna-en", "aura-stella-en", "aura-orion-en", "aura-arcas-en"]) {
      expect(byModel.get(id)).toMatchObject({ provider: "deepgram", voices: [], default_voice: null })
    }
    for (const id of ["sonic-2", "sonic-english"]) {
      expect(byModel.get(id)?.default_voice).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
    }
    const regional = byModel.get("regional-tts")
    expect(regional?.default_voice).toBe("sade")
    expect(regional?.voices).toEqual(expect.arrayContaining([
      "sade", "funmi", "segun", "femi", "amara", "amina", "aliyu", "hasan", "ngozi", "obinna", "henry", "kani"
    ]))
    for (const id of ["eleven_turbo_v2_5", "eleven_flash_v2_5", "eleven_multilingual_v2"]) {
      expect(byModel.get(id)).toMatchObject({ provider: "elevenlabs", default_voice: expect.any(String) })
    }
  })
})

describe("GET /api/ai/audio/speech and /api/ai/audio/transcriptions", () => {
  it("the TTS capabilities list models, formats with content types, limits and supports_streaming", async () => {
    const doc = await get<{
      default_model: string
      models: Array<SpeechModelEntry>
      formats: Array<{ format: string; content_type: string }>
      limits: { max_input_chars: number; speed: { min: number; max: number }; requests_per_minute: number }
      auto: { aliases: Array<string>; order: Array<string> }
    }>("/api/ai/audio/speech")
    expect(doc.default_model).toBe("tts-1")
    expect(doc.formats).toEqual([
      { format: "mp3", content_type: "audio/mpeg" },
      { format: "opus", content_type: "audio/opus" },
      { format: "aac", content_type: "audio/aac" },
      { format: "flac", content_type: "audio/flac" },
      { format: "wav", content_type: "audio/wav" },
      { format: "pcm", content_type: "audio/pcm" }
    ])
    expect(doc.limits).toMatchObject({ max_input_chars: 4096, speed: { min: 0.25, max: 4 } })
    expect(doc.models.every((m) => m.supports_streaming)).toBe(true)
    expect(doc.auto.aliases).toEqual(["auto", "service-auto"])
    expect(doc.auto.order.slice(0, 3)).toEqual(["tts-1", "tts-1-hd", "aura-asteria-en"])
    expect(doc.auto.order.at(-1)).toBe("eleven_multilingual_v2")
    expect(doc.models.find((m) => m.id === "tts-1")?.pricing).toMatchObject({ per_1k_chars_usd: 0.015, pricing_status: "priced" })
    expect(doc.models.find((m) => m.id === "regional-tts")?.pricing).toMatchObject({ per_1k_chars_usd: null, pricing_status: "unpriced" })
  })

  it("the STT capabilities list models, accepted containers, response formats and the 25 MB limit", async () => {
    const doc = await get<{
      default_model: string
      models: Array<{ id: string; provider: string; diarization: boolean; pricing: Record<string, unknown> }>
      containers: Array<{ container: string; mime_types: Array<string>; extensions: Array<string> }>
      response_formats: Array<{ format: string; content_type: string }>
      max_file_size_bytes: number
    }>("/api/ai/audio/transcriptions")
    expect(doc.default_model).toBe("whisper-1")
    expect(doc.models.map((m) => [m.id, m.provider, m.diarization])).toEqual([
      ["whisper-1", "openai", false],
      ["nova-3", "deepgram", true],
      ["transcribe-universal", "assemblyai", true],
      ["regional-stt", "spitch", false]
    ])
    expect(doc.containers.map((c) => c.container)).toEqual(["mp3", "wav", "webm", "mp4", "m4a", "ogg", "flac"])
    expect(doc.containers.find((c) => c.container === "webm")?.mime_types).toContain("audio/webm")
    expect(doc.response_formats.map((f) => f.format)).toEqual(["json", "text", "srt", "vtt", "verbose_json"])
    expect(doc.response_formats.find((f) => f.format === "srt")?.content_type).toBe("application/x-subrip")
    expect(doc.max_file_size_bytes).toBe(25 * 1024 * 1024)
    expect(doc.models.find((m) => m.id === "whisper-1")?.pricing).toMatchObject({ per_minute_usd: 0.006 })
  })

  it("the voice paths are in the OpenAPI document", async () => {
    const openapi = await get<{ paths: Record<string, Record<string, unknown>> }>("/openapi.json")
    expect(Object.keys(openapi.paths["/api/ai/audio/speech"] ?? {}).sort()).toEqual(["get", "post"])
    expect(Object.keys(openapi.paths["/api/ai/audio/transcriptions"] ?? {}).sort()).toEqual(["get", "post"])
    expect(openapi.paths["/api/ai/audio/voices"]).toHaveProperty("get")
  })
})

describe("validation uses the registry it publishes", () => {
  it("every advertised format of every TTS model is served; every other format is a 400", async () => {
    const doc = await get<{ models: Array<SpeechModelEntry>; formats: Array<{ format: string; content_type: string }> }>(
      "/api/ai/audio/speech"
    )
    for (const model of doc.models) {
      for (const { format, content_type } of doc.formats) {
        const res = await speak(gw.baseUrl, gw.project.apiKey, { input: "a", model: model.id, response_format: format })
        if (model.formats.includes(format)) {
          expect([model.id, format, res.status]).toEqual([model.id, format, 200])
          expect(res.headers.get("content-type")).toBe(content_type)
          expect(res.headers.get("x-provider")).toBe(model.provider)
        } else {
          expect([model.id, format, res.status, res.json?.error]).toEqual([model.id, format, 400, "bad_request"])
        }
      }
    }
  })

  it("every advertised voice reaches its provider unchanged", async () => {
    const registry = await get<{ data: Array<VoiceEntry> }>("/api/ai/audio/voices")
    // The local model (espeak-ng, when installed) has no upstream to observe; test/voice/local.test.ts covers it.
    for (const entry of registry.data.filter((e) => e.provider !== "local")) {
      for (const voice of entry.voices) {
        fakes.reset()
        const res = await speak(gw.baseUrl, gw.project.apiKey, { input: "a", model: entry.model, voice })
        expect(res.status).toBe(200)
        const sent = [fakes.openai, fakes.cartesia, fakes.elevenlabs, fakes.spitch].flatMap((f) => f.requests)[0]
        const body = sent?.body.toString("utf8") ?? ""
        expect(sent?.path.includes(voice) || body.includes(`"${voice}"`)).toBe(true)
      }
    }
  })

  it("every advertised STT model transcribes", async () => {
    const doc = await get<{ models: Array<{ id: string; provider: string }> }>("/api/ai/audio/transcriptions")
    for (const model of doc.models) {
      const res = await transcribe(gw.baseUrl, gw.project.apiKey, { model: model.id })
      expect([model.id, res.status, res.headers.get("x-provider")]).toEqual([model.id, 200, model.provider])
    }
  })
})
