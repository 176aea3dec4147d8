import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import OpenAI from "openai"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CustomProviders } from "../../modules/custom-providers/Service.ts"
import { type FakeAnthropic, startFakeAnthropic } from "../fakes/catalog-anthropic.ts"
import { type Gateway, startGateway } from "../harness.ts"
import { bearer, call, serviceKey } from "../http.ts"

const ANTHROPIC_KEY = "sk-ant-listing-0123456789"

interface Row {
  id: string
  object: string
  created: number
  owned_by: string
  name: string
  type: string
  types: Array<string>
  context_window: number
  provider: string
  source: "service" | "byok" | "custom"
  connection_id: string | null
  status: string
  available: boolean
  unavailable_reason: string | null
  pricing_status: string
}

interface ModelList {
  object: string
  data: Array<Row>
  total: number
  distinct_model_ids: number
  next_cursor: string | null
  partial: boolean
  providers: Array<Record<string, unknown>>
}

let gw: Gateway
let anthropic: FakeAnthropic
let anthropicConnection: string
let mistralConnection: string
let ollama: { id: string; name: string }
let sleepy: { id: string; name: string }

const list = async (query = "", key = gw.project.apiKey) => {
  const res = await call(gw.baseUrl, "GET", `/api/v1/models${query}`, { headers: serviceKey(key) })
  expect(res.status, res.text).toBe(200)
  return res.body as ModelList
}

beforeAll(async () => {
  anthropic = await startFakeAnthropic({
    apiKey: ANTHROPIC_KEY,
    models: [
      { id: "claude-sonnet-4-20250514", display_name: "Claude Sonnet 4" },
      { id: "claude-private-preview", display_name: "Claude Private Preview" }
    ]
  })
  gw = await startGateway({ env: { OPENAI_API_KEY: "sk-managed-openai", OPENAI_BASE_URL: "http://127.0.0.1:9/v1" } })
  const secret = bearer(gw.project.secretKey)
  const created = await call(gw.baseUrl, "POST", "/v1/provider-connections", {
    headers: secret,
    json: { provider: "anthropic", api_key: ANTHROPIC_KEY, base_url: anthropic.baseUrl }
  })
  anthropicConnection = (created.body as { id: string }).id
  expect((await call(gw.baseUrl, "POST", `/v1/provider-connections/${anthropicConnection}/sync`, { headers: secret })).status).toBe(201)
  // A connection whose key the provider rejected: it serves nothing.
  const mistral = await call(gw.baseUrl, "POST", "/v1/provider-connections", {
    headers: secret,
    json: { provider: "mistral", api_key: "wrong", base_url: anthropic.baseUrl, api_format: "anthropic" }
  })
  mistralConnection = (mistral.body as { id: string }).id
  await call(gw.baseUrl, "POST", `/v1/provider-connections/${mistralConnection}/validate`, { headers: secret })
  const [a, b] = await gw.run(Effect.gen(function*() {
    const service = yield* CustomProviders
    const a = yield* service.create(gw.project.id, {
      name: "my-ollama",
      baseUrl: "http://127.0.0.1:11434/v1",
      format: "openai",
      models: [{ name: "Llama 3 8B", modelId: "llama3:8b" }, { name: "Qwen", modelId: "qwen2.5:7b" }]
    })
    const b = yield* service.create(gw.project.id, {
      name: "sleepy",
      baseUrl: "http://127.0.0.1:8000/v1",
      format: "anthropic",
      models: [{ name: "Sleepy Model", modelId: "sleepy-1" }]
    })
    yield* service.update(gw.project.id, b.id, { isActive: false })
    return [a, b] as const
  }))
  ollama = a
  sleepy = b
})
afterAll(async () => {
  await gw?.close()
  await anthropic?.close()
})

describe("GET /api/v1/models", () => {
  it("accepts the project API key as SERVICE_API_KEY or bearer, nothing else", async () => {
    expect((await call(gw.baseUrl, "GET", "/api/v1/models", { headers: serviceKey(gw.project.apiKey) })).status).toBe(200)
    expect((await call(gw.baseUrl, "GET", "/api/v1/models", { headers: bearer(gw.project.apiKey) })).status).toBe(200)
    const anonymous = await call(gw.baseUrl, "GET", "/api/v1/models")
    expect(anonymous.status).toBe(401)
    expect(anonymous.body).toMatchObject({ error: { type: "authentication_error" }, status: "failed" })
    expect((await call(gw.baseUrl, "GET", "/api/v1/models", { headers: bearer(gw.project.secretKey) })).status).toBe(401)
  })

  it("answers the ModelList shape", async () => {
    const body = await list()
    expect(body).toMatchObject({ object: "list", partial: false, next_cursor: null })
    expect(body.total).toBe(body.data.length)
    expect(body.distinct_model_ids).toBe(new Set(body.data.map((r) => r.id)).size)
    expect(body.total).toBeGreaterThan(body.distinct_model_ids)
    for (const row of body.data) {
      expect(row).toEqual({
        id: expect.any(String),
        object: "model",
        created: expect.any(Number),
        owned_by: expect.any(String),
        name: expect.any(String),
        type: expect.any(String),
        types: expect.any(Array),
        context_window: expect.any(Number),
        provider: expect.any(String),
        source: expect.stringMatching(/^(service|byok|custom)$/),
        connection_id: row.source === "byok" ? expect.any(String) : null,
        status: expect.any(String),
        available: expect.any(Boolean),
        unavailable_reason: row.available ? null : expect.any(String),
        pricing_status: expect.any(String)
      })
    }
  })

  it("catalog rows of a provider with a managed key are available from the service", async () => {
    const rows = (await list("?provider=openai")).data
    expect(rows.length).toBeGreaterThan(10)
    expect(rows.every((r) => r.source === "service" && r.available && r.connection_id === null && r.owned_by === "openai")).toBe(true)
    expect(rows.find((r) => r.id === "gpt-4o")).toMatchObject({ context_window: 128000, pricing_status: "priced", type: "chat" })
  })

  it("catalog rows of a provider with an active BYOK connection are available through it", async () => {
    const rows = (await list("?provider=anthropic")).data.filter((r) => r.id.startsWith("claude-3"))
    expect(rows.length).toBeGreaterThan(0)
    expect(rows.every((r) => r.source === "byok" && r.available && r.connection_id === anthropicConnection)).toBe(true)
  })

  it("a BYOK connection takes precedence over the managed key", async () => {
    const project = await gw.createProject()
    const created = await call(gw.baseUrl, "POST", "/v1/provider-connections", {
      headers: bearer(project.secretKey),
      json: { provider: "openai", api_key: "sk-own" }
    })
    const connectionId = (created.body as { id: string }).id
    const rows = (await list("?provider=openai", project.apiKey)).data
    expect(rows.every((r) => r.source === "byok" && r.connection_id === connectionId && r.available)).toBe(true)
  })

  it("without a managed key or an active connection rows are unavailable with a reason", async () => {
    for (const provider of ["groq", "mistral", "deepgram"]) {
      const rows = (await list(`?provider=${provider}`)).data
      expect(rows.length, provider).toBeGreaterThan(0)
      expect(rows.every((r) => !r.available && r.unavailable_reason === "provider_not_configured" && r.source === "service"), provider).toBe(true)
    }
  })

  it("synced models of a connection appear with its connection_id, beside the catalog row of the same id", async () => {
    const rows = (await list("?provider=anthropic")).data
    const synced = rows.filter((r) => r.connection_id === anthropicConnection && (r.id === "claude-private-preview" || r.id === "claude-sonnet-4-20250514"))
    expect(synced.map((r) => r.id).sort()).toEqual(["claude-private-preview", "claude-sonnet-4-20250514", "claude-sonnet-4-20250514"])
    const preview = rows.find((r) => r.id === "claude-private-preview")
    expect(preview).toMatchObject({ source: "byok", available: true, owned_by: "anthropic", pricing_status: "unpriced", context_window: 0, name: "Claude Private Preview" })
    const sonnet = rows.filter((r) => r.id === "claude-sonnet-4-20250514")
    expect(sonnet).toHaveLength(2)
    expect(sonnet.every((r) => r.context_window === 200000 && r.pricing_status === "priced")).toBe(true)
  })

  it("custom provider models are owned by custom:<id> with context_window 0, plus an alias row named after the provider", async () => {
    const body = await list(`?provider=custom:${ollama.id}`)
    expect(body.data.map((r) => r.id)).toEqual(["my-ollama", "llama3:8b", "qwen2.5:7b"])
    for (const row of body.data) {
      expect(row).toMatchObject({ owned_by: `custom:${ollama.id}`, provider: `custom:${ollama.id}`, source: "custom", connection_id: null, context_window: 0, available: true })
    }
    expect(body.data[1]?.name).toBe("Llama 3 8B")
    expect(body.total).toBe(3)
    expect(body.providers).toEqual([expect.objectContaining({ id: `custom:${ollama.id}`, name: "my-ollama", model_count: 3, custom: true })])
  })

  it("an inactive custom provider's rows are listed as unavailable", async () => {
    const rows = (await list(`?provider=custom:${sleepy.id}`)).data
    expect(rows.map((r) => r.id)).toEqual(["sleepy", "sleepy-1"])
    expect(rows.every((r) => !r.available && r.unavailable_reason === "provider_inactive" && r.status === "inactive")).toBe(true)
  })

  it("the provider filter is case-insensitive and `custom` lists every custom row", async () => {
    const upper = await list("?provider=OPENAI")
    expect(upper.total).toBe((await list("?provider=openai")).total)
    const custom = await list("?provider=custom")
    expect(custom.data.every((r) => r.source === "custom")).toBe(true)
    expect(custom.total).toBe(5)
    expect((await list("?provider=custom:cprov_unknown")).total).toBe(0)
  })

  it("totals count every filtered row; distinct_model_ids counts unique ids", async () => {
    const body = await list("?provider=anthropic")
    expect(body.total).toBe(body.data.length)
    expect(body.distinct_model_ids).toBe(body.total - 1)
  })

  it("summarises the providers of the filtered rows", async () => {
    const body = await list()
    const byId = new Map(body.providers.map((p) => [p.id, p]))
    expect(byId.get("openai")).toMatchObject({ name: "OpenAI", managed_key: true, available: true })
    expect(byId.get("anthropic")).toMatchObject({ managed_key: false, byok_connection_id: anthropicConnection, available: true })
    expect(byId.get("groq")).toMatchObject({ managed_key: false, byok_connection_id: null, available: false, available_count: 0 })
    const counted = body.providers.reduce((sum, p) => sum + Number(p.model_count), 0)
    expect(counted).toBe(body.total)
  })

  it("paginates with limit and cursor; pages add up to the whole list", async () => {
    const whole = await list()
    const seen: Array<string> = []
    let cursor: string | null = null
    let pages = 0
    do {
      const page: ModelList = await list(`?limit=100${cursor ? `&cursor=${cursor}` : ""}`)
      expect(page.total).toBe(whole.total)
      expect(page.data.length).toBeLessThanOrEqual(100)
      seen.push(...page.data.map((r) => `${r.id}|${r.connection_id}|${r.provider}`))
      cursor = page.next_cursor
      pages++
    } while (cursor !== null)
    expect(pages).toBe(Math.ceil(whole.total / 100))
    expect(seen).toEqual(whole.data.map((r) => `${r.id}|${r.connection_id}|${r.provider}`))
    const last = await list(`?limit=${whole.total}`)
    expect(last.next_cursor).toBeNull()
    const oneShort = await list(`?limit=${whole.total - 1}`)
    expect(oneShort.next_cursor).not.toBeNull()
    for (const query of ["?limit=0", "?limit=1001", "?cursor=not-a-cursor"]) {
      const res = await call(gw.baseUrl, "GET", `/api/v1/models${query}`, { headers: serviceKey(gw.project.apiKey) })
      expect(res.status, query).toBe(400)
      expect(res.body, query).toMatchObject({ error: { type: "invalid_request_error" }, status: "failed" })
    }
  })

  it("another project sees none of this project's connections or custom providers", async () => {
    const other = await gw.createProject()
    const body = await list("", other.apiKey)
    expect(body.data.some((r) => r.source !== "service")).toBe(false)
    expect(body.data.filter((r) => r.provider === "anthropic").every((r) => !r.available)).toBe(true)
  })

  it("works with the official openai SDK's models.list()", async () => {
    const client = new OpenAI({ baseURL: `${gw.baseUrl}/api/v1`, apiKey: gw.project.apiKey })
    const ids: Array<string> = []
    for await (const model of client.models.list()) ids.push(model.id)
    expect(ids).toContain("gpt-4o")
    expect(ids).toContain("my-ollama")
    expect(ids.length).toBe((await list()).total)
    const single = await client.models.list()
    expect(single.data[0]).toMatchObject({ object: "model", owned_by: expect.any(String), created: expect.any(Number) })
  })

  it("a failing source makes the list partial and leaves only that source out", async () => {
    const rename = (from: string, to: string) =>
      gw.run(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql.unsafe(`ALTER TABLE ${from} RENAME TO ${to}`)
      }))
    await rename("provider_models", "provider_models_hidden")
    try {
      const body = await list()
      expect(body.partial).toBe(true)
      expect(body.data.some((r) => r.id === "claude-private-preview")).toBe(false)
      expect(body.data.some((r) => r.id === "gpt-4o")).toBe(true)
      expect(body.data.some((r) => r.id === "my-ollama")).toBe(true)
      expect(gw.logs.some((line) => line.includes("model source failed") && line.includes("synced_models"))).toBe(true)
    } finally {
      await rename("provider_models_hidden", "provider_models")
    }
    expect((await list()).partial).toBe(false)
  })
})

// PGlite runs in-process, so a sleeping query would stall the whole server: this one needs real PostgreSQL.
// The same rule is proven on every backend with TestClock in model-list-sources.test.ts.
describe.runIf(process.env.TEST_DATABASE_URL !== undefined)("a source over MODEL_SOURCE_TIMEOUT_MS (PostgreSQL)", () => {
  let slow: Gateway
  beforeAll(async () => {
    slow = await startGateway({ env: { MODEL_SOURCE_TIMEOUT_MS: "300" } })
    await slow.run(Effect.flatMap(CustomProviders, (s) =>
      s.create(slow.project.id, { name: "slow-one", baseUrl: "http://127.0.0.1:1/v1", format: "openai", models: [{ modelId: "m1" }] })))
  })
  afterAll(() => slow?.close())

  it("is skipped and the list is partial", async () => {
    const sql = (statement: string) =>
      slow.run(Effect.gen(function*() {
        const client = yield* SqlClient.SqlClient
        yield* client.unsafe(statement)
      }))
    // The custom-provider source reads through a view that takes a second to answer.
    await sql("ALTER TABLE custom_providers RENAME TO custom_providers_real")
    await sql("CREATE VIEW custom_providers AS SELECT r.* FROM custom_providers_real r, (SELECT pg_sleep(1)) AS pause")
    try {
      const started = Date.now()
      const res = await call(slow.baseUrl, "GET", "/api/v1/models", { headers: serviceKey(slow.project.apiKey) })
      const elapsed = Date.now() - started
      expect(res.status).toBe(200)
      const body = res.body as ModelList
      expect(body.partial).toBe(true)
      expect(body.data.some((r) => r.source === "custom")).toBe(false)
      expect(body.data.some((r) => r.id === "gpt-4o")).toBe(true)
      expect(elapsed).toBeLessThan(1000)
      expect(slow.logs.some((line) => line.includes("model source timed out"))).toBe(true)
    } finally {
      await sql("DROP VIEW custom_providers")
      await sql("ALTER TABLE custom_providers_real RENAME TO custom_providers")
    }
    const after = await call(slow.baseUrl, "GET", "/api/v1/models", { headers: serviceKey(slow.project.apiKey) })
    expect((after.body as ModelList).partial).toBe(false)
  })
})
