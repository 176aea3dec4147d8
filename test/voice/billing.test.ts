/** Voice billing: per 1,000 characters and per reported minute, no markup, BYOK without service charge, credits. */
import { Effect } from "effect"
import * as Http from "node:http"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { Billing } from "../../modules/usage/Service.ts"
import { type Gateway, startGateway, type TestProject } from "../harness.ts"
import { bearer, call } from "../http.ts"
import { byokStore, speak, startVoiceFakes, transcribe, type VoiceFakes, voiceEnv } from "./setup.ts"

let fakes: VoiceFakes
let gw: Gateway
const byok = byokStore()

beforeAll(async () => {
  fakes = await startVoiceFakes()
  gw = await startGateway({ env: voiceEnv(fakes) })
  byok.bind(gw)
})
afterAll(async () => {
  await gw?.close()
  await fakes?.close()
})

let project: TestProject
beforeEach(async () => {
  fakes.reset()
  await byok.clear()
  project = await gw.createProject()
})

interface UsageEvent {
  readonly kind: string
  readonly model: string
  readonly provider: string
  readonly key_source: string
  readonly request_id: string | null
  readonly usage: { readonly characters: number | null; readonly audioSeconds: number | null }
  readonly cost: { readonly providerCostUsd: number | null; readonly serviceChargeUsd: number; readonly markupPercentage: number }
  readonly pricing_status: string
  readonly status: string
  readonly ttft_ms: number | null
}

const usage = async (p: TestProject) => {
  const res = await call(gw.baseUrl, "GET", "/v1/usage?limit=50", { headers: bearer(p.secretKey) })
  expect(res.status).toBe(200)
  return (res.body as { data: Array<UsageEvent> }).data
}

const configure = (p: TestProject, options: { creditGated?: boolean; creditBalanceUsd?: number; markupPercentage?: number }) =>
  gw.run(Effect.flatMap(Billing, (b) => b.configure(p.id, options)))

const balance = (p: TestProject) => gw.run(Effect.flatMap(Billing, (b) => b.settings(p.id))).then((s) => s.creditBalanceUsd)

describe("usage rows", () => {
  it("TTS on a managed key costs characters / 1000 × the model's price, passed through without the project's markup", async () => {
    await configure(project, { markupPercentage: 25 })
    const res = await speak(gw.baseUrl, project.apiKey, { input: "x".repeat(2000), model: "tts-1-hd" })
    expect(res.status).toBe(200)
    const [row] = await usage(project)
    expect(row).toMatchObject({
      kind: "speech",
      model: "tts-1-hd",
      provider: "openai",
      key_source: "managed",
      request_id: res.headers.get("x-request-id"),
      usage: { characters: 2000, audioSeconds: null },
      cost: { serviceChargeUsd: 0, markupPercentage: 0 },
      pricing_status: "priced",
      status: "succeeded"
    })
    expect(row?.cost.providerCostUsd).toBeCloseTo(0.06, 8)
  })

  it("TTS on a BYOK key records the provider cost with zero service charge", async () => {
    await byok.set(project.id, "elevenlabs")
    await speak(gw.baseUrl, project.apiKey, { input: "y".repeat(500), model: "eleven_multilingual_v2" })
    const [row] = await usage(project)
    expect(row).toMatchObject({ key_source: "byok", provider: "elevenlabs", cost: { serviceChargeUsd: 0, markupPercentage: 0 } })
    expect(row?.cost.providerCostUsd).toBeCloseTo(0.05, 8)
  })

  it("STT costs the provider-reported duration in minutes × the model's price", async () => {
    await transcribe(gw.baseUrl, project.apiKey, {})
    await transcribe(gw.baseUrl, project.apiKey, { model: "nova-3" })
    const rows = await usage(project)
    const whisper = rows.find((r) => r.model === "whisper-1")
    const nova = rows.find((r) => r.model === "nova-3")
    expect(whisper).toMatchObject({ kind: "transcription", usage: { audioSeconds: 9.5, characters: null }, key_source: "managed" })
    expect(whisper?.cost.providerCostUsd).toBeCloseTo((9.5 / 60) * 0.006, 8)
    expect(nova?.usage.audioSeconds).toBe(2.5)
    expect(nova?.cost.providerCostUsd).toBeCloseTo((2.5 / 60) * 0.0043, 8)
  })

  it("an STT answer without a duration is not billed", async () => {
    fakes.deepgram.duration = undefined
    try {
      const res = await transcribe(gw.baseUrl, project.apiKey, { model: "nova-3" })
      expect(res.status).toBe(200)
      const [row] = await usage(project)
      expect(row).toMatchObject({ usage: { audioSeconds: null }, cost: { providerCostUsd: 0, serviceChargeUsd: 0 }, status: "succeeded" })
    } finally {
      fakes.deepgram.duration = 2.5
    }
  })

  it("the regional provider has no known price: rows are unpriced with a null cost", async () => {
    await speak(gw.baseUrl, project.apiKey, { input: "abc", model: "regional-tts" })
    await transcribe(gw.baseUrl, project.apiKey, { model: "regional-stt" })
    const rows = await usage(project)
    expect(rows.map((r) => [r.kind, r.pricing_status, r.cost.providerCostUsd])).toEqual(
      expect.arrayContaining([["speech", "unpriced", null], ["transcription", "unpriced", null]])
    )
  })

  it("a failed upstream call is recorded as failed and not billed", async () => {
    fakes.openai.failure = { status: 500, body: { error: { message: "down", type: "server_error", param: null, code: null } } }
    await speak(gw.baseUrl, project.apiKey, { input: "abc" })
    const [row] = await usage(project)
    expect(row).toMatchObject({ status: "failed", cost: { providerCostUsd: 0, serviceChargeUsd: 0 } })
  })

  it("a streamed TTS answer is billed once the stream ends, with its time to first audio", async () => {
    const response = await new Promise<Http.IncomingMessage>((resolve) => {
      const request = Http.request(`${gw.baseUrl}/api/ai/audio/speech`, {
        method: "POST",
        headers: { SERVICE_API_KEY: project.apiKey, "content-type": "application/json" }
      }, resolve)
      request.end(JSON.stringify({ input: "z".repeat(1000), stream: true }))
    })
    for await (const _ of response) { /* drain */ }
    const [row] = await usage(project)
    expect(row).toMatchObject({ kind: "speech", status: "succeeded", usage: { characters: 1000 } })
    expect(row?.cost.providerCostUsd).toBeCloseTo(0.015, 8)
    expect(row?.ttft_ms).not.toBeNull()
  })
  it("a client leaving mid-stream stops the upstream transfer; the call is recorded as cancelled and still billed", async () => {
    const hold = fakes.openai.holdLastChunk()
    const response = await new Promise<Http.IncomingMessage>((resolve) => {
      const request = Http.request(`${gw.baseUrl}/api/ai/audio/speech`, {
        method: "POST",
        headers: { SERVICE_API_KEY: project.apiKey, "content-type": "application/json" }
      }, resolve)
      request.end(JSON.stringify({ input: "q".repeat(100), stream: true }))
    })
    await new Promise<void>((resolve) => response.once("data", () => resolve()))
    await hold.reachedHold
    expect(fakes.openai.inFlight()).toBe(1)
    response.destroy()
    const deadline = Date.now() + 5000
    while (fakes.openai.inFlight() > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    expect(fakes.openai.inFlight()).toBe(0)
    hold.release()
    let rows = await usage(project)
    while (rows.length === 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20))
      rows = await usage(project)
    }
    expect(rows[0]).toMatchObject({ status: "cancelled", usage: { characters: 100 } })
    expect(rows[0]?.cost.providerCostUsd).toBeCloseTo(0.0015, 8)
  })
})

describe("credits", () => {
  it("a credit-gated project out of credits gets 403 credit_balance_exhausted before any upstream call", async () => {
    await configure(project, { creditGated: true, creditBalanceUsd: 0 })
    const tts = await speak(gw.baseUrl, project.apiKey, { input: "abc" })
    expect(tts.status).toBe(403)
    expect(tts.json).toMatchObject({ error: "credit_balance_exhausted" })
    expect(tts.json?.request_id).toBe(tts.headers.get("x-request-id"))
    const stt = await transcribe(gw.baseUrl, project.apiKey, {})
    expect(stt.status).toBe(403)
    expect(stt.json).toMatchObject({ error: "credit_balance_exhausted" })
    expect(fakes.openai.requests).toHaveLength(0)
  })

  it("the free tier (not credit-gated) is not refused with a zero balance", async () => {
    await configure(project, { creditGated: false, creditBalanceUsd: 0 })
    expect((await speak(gw.baseUrl, project.apiKey, { input: "abc" })).status).toBe(200)
  })

  it("BYOK calls are not gated by credits", async () => {
    await configure(project, { creditGated: true, creditBalanceUsd: 0 })
    await byok.set(project.id, "openai")
    expect((await speak(gw.baseUrl, project.apiKey, { input: "abc" })).status).toBe(200)
  })

  it("a credit-gated balance is debited by exactly the cost: characters for TTS, reported minutes for STT", async () => {
    await configure(project, { creditGated: true, creditBalanceUsd: 1 })
    await speak(gw.baseUrl, project.apiKey, { input: "x".repeat(1000) })
    expect(await balance(project)).toBeCloseTo(1 - 0.015, 8)
    await transcribe(gw.baseUrl, project.apiKey, {})
    expect(await balance(project)).toBeCloseTo(1 - 0.015 - (9.5 / 60) * 0.006, 8)
  })

  it("a failed call returns its hold", async () => {
    await configure(project, { creditGated: true, creditBalanceUsd: 1 })
    fakes.openai.failure = { status: 502, body: "bad gateway" }
    expect((await speak(gw.baseUrl, project.apiKey, { input: "x".repeat(1000) })).status).toBe(502)
    expect(await balance(project)).toBeCloseTo(1, 8)
  })

  it("a client leaving before the provider answers gets its hold back and the call is recorded as cancelled", async () => {
    await configure(project, { creditGated: true, creditBalanceUsd: 1 })
    fakes.openai.delayMs = 1500
    const abort = new AbortController()
    const pending = fetch(`${gw.baseUrl}/api/ai/audio/speech`, {
      method: "POST",
      headers: { SERVICE_API_KEY: project.apiKey, "content-type": "application/json" },
      body: JSON.stringify({ input: "x".repeat(1000) }),
      signal: abort.signal
    }).catch(() => undefined)
    const deadline = Date.now() + 5000
    while (fakes.openai.requests.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
    expect(await balance(project)).toBeCloseTo(1 - 0.015, 8)
    abort.abort()
    await pending
    let rows = await usage(project)
    while (rows.length === 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20))
      rows = await usage(project)
    }
    expect(rows[0]).toMatchObject({ status: "cancelled", cost: { providerCostUsd: 0 } })
    expect(await balance(project)).toBeCloseTo(1, 8)
  })

  it("an unpriced model on a managed key is refused on a credit-gated project", async () => {
    await configure(project, { creditGated: true, creditBalanceUsd: 5 })
    const res = await speak(gw.baseUrl, project.apiKey, { input: "abc", model: "regional-tts" })
    expect(res.status).toBe(403)
    expect(fakes.spitch.requests).toHaveLength(0)
  })
})
