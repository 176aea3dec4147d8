/**
 * The chat gateway through the real server against fake upstreams that speak each provider's wire format:
 * both endpoints, three families, streaming, retries, fallbacks, routing by key, disconnects, cost and credits.
 */
import { createParser, type EventSourceMessage } from "eventsource-parser"
import OpenAI from "openai"
import { Effect } from "effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { Billing } from "../../modules/usage/Service.ts"
import { startAnthropicFake } from "../fakes/anthropic.ts"
import { startGoogleFake } from "../fakes/google.ts"
import { startOpenAIFake } from "../fakes/openai.ts"
import type { FakeUpstream } from "../fakes/upstream.ts"
import { type Gateway, startGateway } from "../harness.ts"
import { bearer, call, serviceKey } from "../http.ts"

let gw: Gateway
let openai: FakeUpstream
let anthropic: FakeUpstream
let google: FakeUpstream

beforeAll(async () => {
  openai = await startOpenAIFake({ apiKey: "sk-managed" })
  anthropic = await startAnthropicFake({ apiKey: "ak-managed" })
  google = await startGoogleFake({ apiKey: "gk-managed" })
  gw = await startGateway({
    env: {
      OPENAI_BASE_URL: openai.baseUrl,
      OPENAI_API_KEY: "sk-managed",
      ANTHROPIC_BASE_URL: anthropic.baseUrl,
      ANTHROPIC_API_KEY: "ak-managed",
      GOOGLE_BASE_URL: google.baseUrl,
      GOOGLE_API_KEY: "gk-managed",
      UPSTREAM_RETRY_BASE_MS: "20",
      UPSTREAM_TIMEOUT_MS: "3000"
    }
  })
})
afterAll(async () => {
  await gw?.close()
  await Promise.all([openai?.close(), anthropic?.close(), google?.close()])
})
beforeEach(() => {
  openai.reset()
  anthropic.reset()
  google.reset()
})

const chat = (body: Record<string, unknown>, key = gw.project.apiKey) =>
  call(gw.baseUrl, "POST", "/api/ai/chat", { headers: serviceKey(key), json: body })

const hello = (model: string, extra: Record<string, unknown> = {}) => ({
  model,
  messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Say hello" }],
  ...extra
})

/** Reads an SSE response with a standard parser, noting when each message arrived. */
const readSse = async (response: Response) => {
  const messages: Array<{ data: string; at: number }> = []
  const parser = createParser({ onEvent: (event: EventSourceMessage) => messages.push({ data: event.data, at: Date.now() }) })
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    parser.feed(decoder.decode(value, { stream: true }))
  }
  return messages
}

/** The wire shapes these tests read (the gateway's OpenAI-format answers and usage rows). */
interface WireToolCall {
  readonly id: string
  readonly type: string
  readonly function: { readonly name: string; readonly arguments: string }
}
interface WireCost {
  readonly providerCostUsd: number | null
  readonly serviceChargeUsd: number
  readonly markupPercentage: number
}
interface WireCompletion {
  readonly choices: ReadonlyArray<{
    readonly message: { readonly content: string | null; readonly tool_calls?: ReadonlyArray<WireToolCall> }
    readonly finish_reason: string
  }>
  readonly cost: WireCost
  readonly provider: string
}
interface WireChunk {
  readonly choices: ReadonlyArray<{
    readonly delta: { readonly content?: string; readonly tool_calls?: ReadonlyArray<Partial<WireToolCall> & { readonly function: { readonly arguments: string } }> }
    readonly finish_reason: string | null
  }>
  readonly usage?: Record<string, number>
  readonly cost?: WireCost
}
interface UsageRow {
  readonly status: string
  readonly ttft_ms: number
  readonly usage: { readonly completionTokens: number }
  readonly cost: WireCost
}

const completionOf = (res: { readonly body: unknown }) => res.body as WireCompletion
const chunksOf = (messages: ReadonlyArray<{ readonly data: string }>) =>
  messages.slice(0, -1).map((m) => JSON.parse(m.data) as WireChunk)

const usageRows = async (projectKey = gw.project.secretKey) => {
  const res = await call(gw.baseUrl, "GET", "/v1/usage?limit=100", { headers: bearer(projectKey) })
  return (res.body as { data: ReadonlyArray<UsageRow> }).data
}

describe("non-streaming answers", () => {
  it.each([
    ["gpt-4o-mini", "openai", () => openai],
    ["claude-3-5-haiku-20241022", "anthropic", () => anthropic],
    ["gemini-2.0-flash", "google", () => google]
  ] as const)("%s answers a chat.completion with provider and cost", async (model, provider, fake) => {
    fake().enqueue({ text: "Hello there", usage: { promptTokens: 1000, completionTokens: 500 } })
    const res = await chat(hello(model))
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      object: "chat.completion",
      model,
      choices: [{ index: 0, message: { role: "assistant", content: "Hello there" }, finish_reason: "stop" }],
      usage: { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 },
      provider,
      cost: { providerCostUsd: expect.any(Number), serviceChargeUsd: 0, markupPercentage: 0 }
    })
    expect(res.headers.get("x-provider")).toBe(provider)
    expect(Number(res.headers.get("x-gateway-overhead-ms"))).toBeGreaterThanOrEqual(0)
    expect(Number(res.headers.get("x-time-to-first-token-ms"))).toBeGreaterThan(0)
    // The managed key went upstream in the provider's own auth header; the system prompt was mapped.
    expect(fake().requestCount).toBe(1)
  })

  it("cost comes from catalog prices (gpt-4o-mini: $0.15 in, $0.60 out per million)", async () => {
    openai.enqueue({ text: "ok", usage: { promptTokens: 2_000_000, completionTokens: 1_000_000 } })
    const res = await chat(hello("gpt-4o-mini"))
    expect((res.body as { cost: { providerCostUsd: number } }).cost.providerCostUsd).toBeCloseTo(0.3 + 0.6, 8)
  })

  it("tool definitions go up and tool calls come back, both ways, for each family", async () => {
    const tools = [{
      type: "function",
      function: { name: "get_weather", description: "Weather", parameters: { type: "object", properties: { city: { type: "string" } } } }
    }]
    for (const [model, fake] of [["gpt-4o-mini", openai], ["claude-3-5-haiku-20241022", anthropic], ["gemini-2.0-flash", google]] as const) {
      fake.enqueue({ toolCalls: [{ id: "call_1", name: "get_weather", arguments: { city: "Lagos" } }] })
      const first = await chat(hello(model, { tools }))
      expect(first.status).toBe(200)
      const message = completionOf(first).choices[0]!.message
      expect(completionOf(first).choices[0]!.finish_reason).toBe("tool_calls")
      const toolCall = message.tool_calls![0]!
      expect(toolCall).toMatchObject({ type: "function", function: { name: "get_weather" } })
      expect(JSON.parse(toolCall.function.arguments)).toEqual({ city: "Lagos" })
      expect(JSON.stringify(fake.lastRequest()!.body)).toContain("get_weather")

      fake.enqueue({ text: "Sunny" })
      const second = await chat({
        model,
        tools,
        messages: [
          { role: "user", content: "Weather in Lagos?" },
          { role: "assistant", content: null, tool_calls: message.tool_calls },
          { role: "tool", tool_call_id: toolCall.id, content: "31C and sunny" }
        ]
      })
      expect(second.status).toBe(200)
      expect(completionOf(second).choices[0]!.message.content).toBe("Sunny")
      expect(JSON.stringify(fake.lastRequest()!.body)).toContain("31C and sunny")
    }
  })
})

describe("streaming", () => {
  it.each([
    ["gpt-4o-mini", () => openai],
    ["claude-3-5-haiku-20241022", () => anthropic],
    ["gemini-2.0-flash", () => google]
  ] as const)("%s streams OpenAI chunks as the upstream produces them, then usage and cost, then [DONE]", async (model, fake) => {
    fake().enqueue({ text: ["Hel", "lo ", "wor", "ld"], chunkDelayMs: 150, usage: { promptTokens: 20, completionTokens: 4 } })
    const started = Date.now()
    const response = await fetch(`${gw.baseUrl}/api/ai/chat`, {
      method: "POST",
      headers: { ...serviceKey(gw.project.apiKey), "content-type": "application/json" },
      body: JSON.stringify(hello(model, { stream: true }))
    })
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toContain("text/event-stream")
    expect(Number(response.headers.get("x-time-to-first-token-ms"))).toBeGreaterThan(0)
    const messages = await readSse(response)
    expect(messages.at(-1)!.data).toBe("[DONE]")
    const chunks = chunksOf(messages)
    const text = chunks.flatMap((c) => c.choices.map((choice) => choice.delta.content ?? "")).join("")
    expect(text).toBe("Hello world")
    // Deltas were forwarded while the upstream was still producing, not buffered.
    const firstText = messages.find((m) => m.data.includes("\"content\":\"Hel\""))!
    expect(firstText.at - started).toBeLessThan(messages.at(-1)!.at - started - 300)
    const summary = chunks.at(-1)!
    expect(summary.choices).toEqual([])
    expect(summary.usage).toMatchObject({ prompt_tokens: 20, completion_tokens: 4, total_tokens: 24 })
    expect(summary.cost).toEqual({ providerCostUsd: expect.any(Number), serviceChargeUsd: 0, markupPercentage: 0 })
    expect(chunks.some((c) => c.choices[0]?.finish_reason === "stop")).toBe(true)
  })

  it("streams tool calls as OpenAI tool_call deltas", async () => {
    anthropic.enqueue({ toolCalls: [{ id: "toolu_1", name: "lookup", arguments: { q: "x" } }] })
    const response = await fetch(`${gw.baseUrl}/api/ai/chat`, {
      method: "POST",
      headers: { ...serviceKey(gw.project.apiKey), "content-type": "application/json" },
      body: JSON.stringify(hello("claude-3-5-haiku-20241022", {
        stream: true,
        tools: [{ type: "function", function: { name: "lookup", parameters: { type: "object" } } }]
      }))
    })
    const chunks = chunksOf(await readSse(response))
    const calls = chunks.flatMap((c) => c.choices.flatMap((choice) => choice.delta.tool_calls ?? []))
    expect(calls[0]).toMatchObject({ index: 0, id: "toolu_1", type: "function", function: { name: "lookup" } })
    expect(JSON.parse(calls.map((c) => c.function.arguments).join(""))).toEqual({ q: "x" })
    expect(chunks.some((c) => c.choices[0]?.finish_reason === "tool_calls")).toBe(true)
  })
})

describe("retries and fallbacks", () => {
  it("retries 500 and 429 before the first byte", async () => {
    openai.enqueue({ status: 500 }, { status: 429, retryAfter: 0 }, { text: "third time" })
    const res = await chat(hello("gpt-4o-mini"))
    expect(res.status).toBe(200)
    expect(completionOf(res).choices[0]!.message.content).toBe("third time")
    expect(openai.requestCount).toBe(3)
  })

  it("does not retry a rejected request (400) and answers 400", async () => {
    openai.enqueue({ status: 400, error: { message: "bad things" } })
    const res = await chat(hello("gpt-4o-mini"))
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ error: "upstream_rejected", message: expect.stringContaining("bad things") })
    expect(openai.requestCount).toBe(1)
  })

  it("answers 502 in the envelope when retries are spent", async () => {
    openai.enqueue({ status: 503 }, { status: 503 }, { status: 503 })
    const res = await chat(hello("gpt-4o-mini"))
    expect(res.status).toBe(502)
    expect(res.body).toMatchObject({ error: "upstream_error", request_id: expect.stringMatching(/^req_/) })
    expect(openai.requestCount).toBe(3)
  })

  it("never retries after the first byte: a mid-stream failure ends the stream with an error event", async () => {
    openai.enqueue({ text: ["partial ", "answer"], streamError: { message: "boom", type: "server_error" } })
    const response = await fetch(`${gw.baseUrl}/api/ai/chat`, {
      method: "POST",
      headers: { ...serviceKey(gw.project.apiKey), "content-type": "application/json" },
      body: JSON.stringify(hello("gpt-4o-mini", { stream: true }))
    })
    expect(response.status).toBe(200)
    const messages = await readSse(response)
    expect(messages.map((m) => m.data).join("\n")).toContain("partial ")
    expect(JSON.parse(messages.at(-2)!.data)).toMatchObject({ error: { code: "upstream_error" } })
    expect(messages.at(-1)!.data).toBe("[DONE]")
    expect(openai.requestCount).toBe(1)
  })

  it("falls back to the next model, in order, when the first fails upstream", async () => {
    openai.enqueue({ status: 500 }, { status: 500 }, { status: 500 })
    anthropic.enqueue({ text: "from the fallback" })
    const res = await chat(hello("gpt-4o-mini", { fallbacks: ["claude-3-5-haiku-20241022", "gemini-2.0-flash"] }))
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ model: "claude-3-5-haiku-20241022", provider: "anthropic" })
    expect(google.requestCount).toBe(0)
  })
})

describe("routing and keys", () => {
  it("a project's BYOK connection is used before the managed key, and carries no service charge", async () => {
    const byokUpstream = await startOpenAIFake({ apiKey: "sk-byok-123" })
    try {
      const project = await gw.createProject()
      await gw.run(Effect.flatMap(Billing, (b) => b.configure(project.id, { markupPercentage: 10 })))
      const created = await call(gw.baseUrl, "POST", "/v1/provider-connections", {
        headers: bearer(project.secretKey),
        json: { provider: "openai", api_key: "sk-byok-123", base_url: byokUpstream.baseUrl }
      })
      expect(created.status).toBe(201)
      byokUpstream.enqueue({ text: "byok answer", usage: { promptTokens: 1_000_000, completionTokens: 0 } })
      const byok = await chat(hello("gpt-4o-mini"), project.apiKey)
      expect(byok.status).toBe(200)
      expect(byokUpstream.lastRequest()!.headers.authorization).toBe("Bearer sk-byok-123")
      expect(openai.requestCount).toBe(0)
      expect(completionOf(byok).cost).toEqual({ providerCostUsd: 0.15, serviceChargeUsd: 0, markupPercentage: 0 })
      const rows = await usageRows(project.secretKey)
      expect(rows[0]).toMatchObject({ key_source: "byok", provider: "openai", cost: { serviceChargeUsd: 0 } })

      // Another project without a connection goes through the managed key.
      openai.enqueue({ text: "managed" })
      expect((await chat(hello("gpt-4o-mini"))).status).toBe(200)
      expect(openai.lastRequest()!.headers.authorization).toBe("Bearer sk-managed")
    } finally {
      await byokUpstream.close()
    }
  })

  it("managed keys add the project's markup", async () => {
    const project = await gw.createProject()
    await gw.run(Effect.flatMap(Billing, (b) => b.configure(project.id, { markupPercentage: 10 })))
    openai.enqueue({ text: "ok", usage: { promptTokens: 1_000_000, completionTokens: 0 } })
    const res = await chat(hello("gpt-4o-mini"), project.apiKey)
    expect(completionOf(res).cost).toEqual({ providerCostUsd: 0.15, serviceChargeUsd: 0.015, markupPercentage: 10 })
  })

  it("no usable key answers 400 provider_not_configured instead of an upstream 401", async () => {
    const res = await chat(hello("mistral-large-latest"))
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ error: "provider_not_configured", param: "model" })
  })

  it("an unknown model answers 400 model_not_found", async () => {
    const res = await chat(hello("no-such-model-anywhere"))
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ error: "model_not_found" })
  })

  it("a custom provider's name or model routes to it; inactive and deleted ones do not", async () => {
    const own = await startOpenAIFake()
    try {
      const user = await gw.createUser(gw.project.id)
      const login = await call(gw.baseUrl, "POST", "/api/auth/login", { json: user })
      const cookie = { cookie: (login.headers.get("set-cookie") ?? "").split(";")[0]! }
      const created = await call(gw.baseUrl, "POST", `/api/projects/${gw.project.id}/providers`, {
        headers: cookie,
        json: { name: "my-llama", baseUrl: own.baseUrl, format: "openai", models: [{ name: "llama-local", modelId: "llama3:8b" }] }
      })
      expect(created.status).toBe(201)
      const providerId = (created.body as { provider: { id: string } }).provider.id

      own.enqueue({ text: "by name" }, { text: "by model" })
      const byName = await chat(hello("my-llama"))
      expect(byName.status).toBe(200)
      expect(byName.body).toMatchObject({ provider: `custom:${providerId}`, pricing_status: "custom" })
      expect((own.lastRequest()!.body as { model: string }).model).toBe("llama3:8b")
      expect((await chat(hello("llama-local"))).status).toBe(200)

      await call(gw.baseUrl, "PATCH", `/api/projects/${gw.project.id}/providers/${providerId}`, { headers: cookie, json: { isActive: false } })
      expect((await chat(hello("my-llama"))).body).toMatchObject({ error: "model_not_found" })

      await call(gw.baseUrl, "PATCH", `/api/projects/${gw.project.id}/providers/${providerId}`, { headers: cookie, json: { isActive: true } })
      await call(gw.baseUrl, "DELETE", `/api/projects/${gw.project.id}/providers/${providerId}`, { headers: cookie })
      const afterDelete = await chat(hello("llama-local"))
      expect(afterDelete.status).toBe(400)
      expect(afterDelete.body).toMatchObject({ error: "model_not_found" })
      expect(own.requestCount).toBe(2)
    } finally {
      await own.close()
    }
  })
})

describe("disconnects and billing", () => {
  it("a client that disconnects aborts the upstream call, and the call is billed for what was produced", async () => {
    const project = await gw.createProject()
    openai.enqueue({ text: ["one ", "two ", "three ", "four ", "five "], chunkDelayMs: 300 })
    const controller = new AbortController()
    const response = await fetch(`${gw.baseUrl}/api/ai/chat`, {
      method: "POST",
      headers: { ...serviceKey(project.apiKey), "content-type": "application/json" },
      body: JSON.stringify(hello("gpt-4o-mini", { stream: true })),
      signal: controller.signal
    })
    const reader = response.body!.getReader()
    await reader.read()
    controller.abort()
    const aborted = await openai.waitForAbort(5000)
    expect(aborted.aborted).toBe(true)
    await new Promise((resolve) => setTimeout(resolve, 200))
    const rows = await usageRows(project.secretKey)
    expect(rows[0]).toMatchObject({ status: "cancelled", model: "gpt-4o-mini", key_source: "managed", pricing_status: "priced" })
    expect(rows[0]!.usage.completionTokens).toBeGreaterThan(0)
    expect(rows[0]!.cost.providerCostUsd).toBeGreaterThan(0)
  })

  it("streamed calls are billed with the upstream's usage", async () => {
    const project = await gw.createProject()
    openai.enqueue({ text: ["a", "b"], usage: { promptTokens: 100, completionTokens: 2 } })
    const response = await fetch(`${gw.baseUrl}/api/ai/chat`, {
      method: "POST",
      headers: { ...serviceKey(project.apiKey), "content-type": "application/json" },
      body: JSON.stringify(hello("gpt-4o-mini", { stream: true }))
    })
    await readSse(response)
    const rows = await usageRows(project.secretKey)
    expect(rows[0]).toMatchObject({ status: "succeeded", usage: { promptTokens: 100, completionTokens: 2 } })
    expect(rows[0]!.ttft_ms).toBeGreaterThan(0)
  })

  it("an unpriced model is refused on a credit-gated project and flagged elsewhere, never priced $0", async () => {
    const gated = await gw.createProject()
    await gw.run(Effect.flatMap(Billing, (b) => b.configure(gated.id, { creditGated: true, creditBalanceUsd: 10 })))
    const refused = await chat(hello("gemma-3"), gated.apiKey)
    expect(refused.status).toBe(403)
    expect(refused.body).toMatchObject({ error: "unpriced_model" })

    const free = await gw.createProject()
    google.enqueue({ text: "ok", usage: { promptTokens: 10, completionTokens: 1 } })
    const allowed = await chat(hello("gemma-3"), free.apiKey)
    expect(allowed.status).toBe(200)
    expect(allowed.body).toMatchObject({ pricing_status: "unpriced", cost: { providerCostUsd: null } })
    const rows = await usageRows(free.secretKey)
    expect(rows[0]).toMatchObject({ pricing_status: "unpriced", cost: { providerCostUsd: null } })
  })

  it("credits: parallel calls on a credit-gated project never overdraw it; the spent balance answers 403", async () => {
    const project = await gw.createProject()
    // Each call holds (prompt estimate + max_tokens) at gpt-4o prices: about $0.0101 for max_tokens 1000.
    await gw.run(Effect.flatMap(Billing, (b) => b.configure(project.id, { creditGated: true, creditBalanceUsd: 0.05 })))
    openai.setDefault({ text: "ok", usage: { promptTokens: 10, completionTokens: 1000 }, delayMs: 50 })
    try {
      const results = await Promise.all(
        Array.from({ length: 12 }, () => chat(hello("gpt-4o", { max_tokens: 1000 }), project.apiKey))
      )
      const ok = results.filter((r) => r.status === 200).length
      const refused = results.filter((r) => r.status === 403)
      expect(ok).toBeGreaterThan(0)
      expect(ok + refused.length).toBe(12)
      for (const r of refused) expect(r.body).toMatchObject({ error: "credit_balance_exhausted" })
      const settings = await gw.run(Effect.flatMap(Billing, (b) => b.settings(project.id)))
      expect(settings.creditBalanceUsd).toBeGreaterThanOrEqual(0)
      expect(settings.creditBalanceUsd).toBeCloseTo(0.05 - ok * (10 * 2.5 + 1000 * 10) / 1e6, 6)
    } finally {
      openai.setDefault({ text: "echo" })
    }
  })
})

describe("the official openai SDK", () => {
  it("completes and streams a chat through /api/v1 with only baseURL and apiKey", async () => {
    const client = new OpenAI({ baseURL: `${gw.baseUrl}/api/v1`, apiKey: gw.project.apiKey, maxRetries: 0 })
    openai.enqueue({ text: "sdk hello", usage: { promptTokens: 5, completionTokens: 2 } })
    const completion = await client.chat.completions.create({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "hi" }]
    })
    expect(completion.choices[0]!.message.content).toBe("sdk hello")
    expect(completion.usage?.total_tokens).toBe(7)

    anthropic.enqueue({ text: ["str", "eam"], usage: { promptTokens: 5, completionTokens: 2 } })
    const stream = await client.chat.completions.create({
      model: "claude-3-5-haiku-20241022",
      messages: [{ role: "user", content: "hi" }],
      stream: true,
      stream_options: { include_usage: true }
    })
    let text = ""
    let usage: unknown = null
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? ""
      if (chunk.usage) usage = chunk.usage
    }
    expect(text).toBe("stream")
    expect(usage).toMatchObject({ total_tokens: 7 })
  })

  it("errors reach the SDK as APIError with the upstream status mapped", async () => {
    const client = new OpenAI({ baseURL: `${gw.baseUrl}/api/v1`, apiKey: gw.project.apiKey, maxRetries: 0 })
    await expect(client.chat.completions.create({ model: "no-such-model", messages: [{ role: "user", content: "x" }] }))
      .rejects.toMatchObject({ status: 400, code: "model_not_found" })
    const bad = new OpenAI({ baseURL: `${gw.baseUrl}/api/v1`, apiKey: "sak_wrong", maxRetries: 0 })
    await expect(bad.chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "x" }] }))
      .rejects.toMatchObject({ status: 401 })
  })
})
