/** Provider keys: managed vs BYOK, provider_not_configured, and the BYOK-only auto-router (402 byok_required). */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { startOpenAIVoiceFake } from "../fakes/voice-openai.ts"
import { type Gateway, startGateway, type TestProject } from "../harness.ts"
import { BYOK_KEY, byokStore, speak, startVoiceFakes, transcribe, type VoiceFakes, voiceEnv } from "./setup.ts"

let fakes: VoiceFakes
let gw: Gateway
const byok = byokStore()

beforeAll(async () => {
  fakes = await startVoiceFakes()
  // Managed keys for four providers; ElevenLabs and AssemblyAI have none.
  gw = await startGateway({
    env: voiceEnv(fakes, ["openai", "deepgram", "cartesia", "spitch"])
  })
  byok.bind(gw)
})
afterAll(async () => {
  await gw?.close()
  await fakes?.close()
})
beforeEach(async () => {
  fakes.reset()
  await byok.clear()
})

let project: TestProject
beforeEach(async () => {
  project = await gw.createProject()
})

describe("managed and BYOK keys", () => {
  it("a provider with neither a managed nor a BYOK key is a 400 provider_not_configured", async () => {
    const tts = await speak(gw.baseUrl, project.apiKey, { input: "a", model: "eleven_flash_v2_5" })
    expect(tts.status).toBe(400)
    expect(tts.json).toMatchObject({ error: "provider_not_configured", provider: "elevenlabs" })
    expect(tts.json?.request_id).toBe(tts.headers.get("x-request-id"))
    const stt = await transcribe(gw.baseUrl, project.apiKey, { model: "transcribe-universal" })
    expect(stt.status).toBe(400)
    expect(stt.json).toMatchObject({ error: "provider_not_configured", provider: "assemblyai" })
    expect(fakes.elevenlabs.requests.length + fakes.assemblyai.requests.length).toBe(0)
  })

  it("a project's BYOK key serves a provider without a managed key", async () => {
    await byok.set(project.id, "elevenlabs")
    await byok.set(project.id, "assemblyai")
    const tts = await speak(gw.baseUrl, project.apiKey, { input: "a", model: "eleven_flash_v2_5" })
    expect(tts.status).toBe(200)
    expect(fakes.elevenlabs.requests[0]?.headers["xi-api-key"]).toBe(BYOK_KEY)
    const stt = await transcribe(gw.baseUrl, project.apiKey, { model: "transcribe-universal" })
    expect(stt.status).toBe(200)
    expect(fakes.assemblyai.requests.every((r) => r.headers.authorization === BYOK_KEY)).toBe(true)
  })

  it("a BYOK key takes precedence over the managed key, and only for its own project", async () => {
    const other = await gw.createProject()
    await byok.set(project.id, "openai")
    await speak(gw.baseUrl, project.apiKey, { input: "a" })
    await speak(gw.baseUrl, other.apiKey, { input: "a" })
    expect(fakes.openai.requests.map((r) => r.headers.authorization)).toEqual([`Bearer ${BYOK_KEY}`, "Bearer test-key"])
  })

  it("a BYOK connection's own base URL is used when it has one", async () => {
    const own = await startOpenAIVoiceFake({ keys: [BYOK_KEY] })
    try {
      await byok.set(project.id, "openai", { baseUrl: `${own.url}/` })
      const res = await speak(gw.baseUrl, project.apiKey, { input: "own endpoint" })
      expect(res.status).toBe(200)
      expect(own.requests).toHaveLength(1)
      expect(fakes.openai.requests).toHaveLength(0)
    } finally {
      await own.close()
    }
  })
})

describe("the auto-router (model auto / service-auto)", () => {
  it("never uses managed keys: with no BYOK key the answer is 402 byok_required", async () => {
    const res = await speak(gw.baseUrl, project.apiKey, { input: "a", model: "auto" })
    expect(res.status).toBe(402)
    expect(res.json).toMatchObject({ error: "byok_required", param: "model" })
    expect(fakes.openai.requests).toHaveLength(0)
  })

  it("picks the first model in latency order that has a BYOK key: tts-1 before the aura family", async () => {
    await byok.set(project.id, "deepgram")
    const aura = await speak(gw.baseUrl, project.apiKey, { input: "a", model: "auto" })
    expect(aura.status).toBe(200)
    expect(aura.headers.get("x-provider")).toBe("deepgram")
    expect(fakes.deepgram.requests[0]?.query.get("model")).toBe("aura-asteria-en")
    expect(fakes.deepgram.requests[0]?.headers.authorization).toBe(`Token ${BYOK_KEY}`)

    await byok.set(project.id, "openai")
    const openai = await speak(gw.baseUrl, project.apiKey, { input: "a", model: "service-auto", voice: "nova" })
    expect(openai.headers.get("x-provider")).toBe("openai")
    expect(JSON.parse(fakes.openai.requests[0]?.body.toString() ?? "{}")).toMatchObject({ model: "tts-1", voice: "nova" })
  })

  it("skips models that cannot produce the requested format", async () => {
    await byok.set(project.id, "cartesia")
    await byok.set(project.id, "elevenlabs")
    const wav = await speak(gw.baseUrl, project.apiKey, { input: "a", model: "auto", response_format: "wav" })
    expect(wav.headers.get("x-provider")).toBe("cartesia")
    const opus = await speak(gw.baseUrl, project.apiKey, { input: "a", model: "auto", response_format: "opus" })
    expect(opus.headers.get("x-provider")).toBe("elevenlabs")
    const aac = await speak(gw.baseUrl, project.apiKey, { input: "a", model: "auto", response_format: "aac" })
    expect(aac.status).toBe(402)
    expect(aac.json).toMatchObject({ error: "byok_required" })
  })

  it("skips models without a known unit price: a BYOK key for the unpriced regional provider alone is not enough", async () => {
    await byok.set(project.id, "spitch")
    const res = await speak(gw.baseUrl, project.apiKey, { input: "a", model: "auto" })
    expect(res.status).toBe(402)
    expect(fakes.spitch.requests).toHaveLength(0)
  })

  it("validation still comes first: a bad speed is a 400 even for auto", async () => {
    const res = await speak(gw.baseUrl, project.apiKey, { input: "a", model: "auto", speed: 10 })
    expect(res.status).toBe(400)
    expect(res.json).toMatchObject({ error: "bad_request", param: "speed" })
  })
})
