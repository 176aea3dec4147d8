import { SqlClient } from "@effect/sql"
import { Effect, Option, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { SecretBox } from "../../layers/crypto.ts"
import { ProviderConnections } from "../../modules/connections/Service.ts"
import { type FakeAnthropic, startFakeAnthropic } from "../fakes/catalog-anthropic.ts"
import { type FakeOpenAI, startFakeOpenAI } from "../fakes/catalog-openai.ts"
import { type Gateway, startGateway } from "../harness.ts"
import { bearer, call, serviceKey } from "../http.ts"

const OPENAI_KEY = "sk-byok-openai-0123456789abcdef"
const ANTHROPIC_KEY = "sk-ant-byok-fedcba9876543210"

let gw: Gateway
let openai: FakeOpenAI
let anthropic: FakeAnthropic
beforeAll(async () => {
  openai = await startFakeOpenAI({
    apiKey: OPENAI_KEY,
    models: [{ id: "gpt-4o", owned_by: "openai" }, { id: "gpt-4o-mini", owned_by: "openai" }, { id: "ft:gpt-4o:acme", owned_by: "acme" }]
  })
  anthropic = await startFakeAnthropic({
    apiKey: ANTHROPIC_KEY,
    pageSize: 2,
    models: [
      { id: "claude-a", display_name: "Claude A" },
      { id: "claude-b", display_name: "Claude B" },
      { id: "claude-c", display_name: "Claude C" },
      { id: "claude-d", display_name: "Claude D" },
      { id: "claude-e", display_name: "Claude E" }
    ]
  })
  gw = await startGateway({ env: { PROVIDER_LIST_TIMEOUT_MS: "1000" } })
})
afterAll(async () => {
  await gw?.close()
  await openai?.close()
  await anthropic?.close()
})

const auth = () => bearer(gw.project.secretKey)

interface Connection {
  id: string
  object: string
  name: string
  provider: string
  api_format: string
  base_url: string | null
  status: string
  last_tested_at: string | null
  created_at: string
  updated_at: string
}

const connect = async (json: Record<string, unknown>, headers = auth()) => {
  const res = await call(gw.baseUrl, "POST", "/v1/provider-connections", { headers, json })
  expect(res.status, res.text).toBe(201)
  return res.body as Connection
}

const openaiConnection = () => connect({ provider: "openai", api_key: OPENAI_KEY, base_url: openai.baseUrl, name: "my openai" })
const anthropicConnection = () => connect({ provider: "anthropic", api_key: ANTHROPIC_KEY, base_url: anthropic.baseUrl })

describe("provider connections", () => {
  it("need the project secret key (platform envelope)", async () => {
    const res = await call(gw.baseUrl, "GET", "/v1/provider-connections", { headers: serviceKey(gw.project.apiKey) })
    expect(res.status).toBe(401)
    expect(res.body).toMatchObject({ error: { type: "authentication_error" }, status: "failed" })
    const withApiKey = await call(gw.baseUrl, "GET", "/v1/provider-connections", { headers: bearer(gw.project.apiKey) })
    expect(withApiKey.status).toBe(401)
  })

  it("create answers 201 with the ProviderConnection, never the key", async () => {
    const res = await call(gw.baseUrl, "POST", "/v1/provider-connections", {
      headers: auth(),
      json: { provider: "openai", api_key: OPENAI_KEY, base_url: `${openai.baseUrl}/`, name: "prod openai" }
    })
    expect(res.status).toBe(201)
    expect(res.body).toEqual({
      id: expect.stringMatching(/^pconn_/),
      object: "provider_connection",
      name: "prod openai",
      provider: "openai",
      api_format: "openai",
      base_url: openai.baseUrl,
      status: "active",
      last_tested_at: null,
      created_at: expect.any(String),
      updated_at: expect.any(String)
    })
    expect(res.text).not.toContain(OPENAI_KEY)
  })

  it("defaults the api format by provider and the base URL to the provider's", async () => {
    expect(await connect({ provider: "Anthropic", api_key: "k-1" })).toMatchObject({ provider: "anthropic", api_format: "anthropic", base_url: null, name: "anthropic" })
    expect(await connect({ provider: "deepgram", api_key: "k-2" })).toMatchObject({ api_format: "native" })
    expect(await connect({ provider: "groq", api_key: "k-3" })).toMatchObject({ api_format: "openai" })
  })

  it("create rejects unknown providers, empty keys, bad formats and bad URLs with 400", async () => {
    for (const json of [
      { provider: "acme", api_key: "k" },
      { provider: "openai", api_key: "  " },
      { provider: "openai", api_key: "k", api_format: "soap" },
      { provider: "openai", api_key: "k", base_url: "file:///etc/passwd" },
      { provider: "openai" }
    ]) {
      const res = await call(gw.baseUrl, "POST", "/v1/provider-connections", { headers: auth(), json })
      expect(res.status, JSON.stringify(json)).toBe(400)
      expect(res.body, JSON.stringify(json)).toMatchObject({ error: { type: "invalid_request_error" }, status: "failed" })
    }
  })

  it("list is newest first with cursor pagination", async () => {
    const project = await gw.createProject()
    const headers = bearer(project.secretKey)
    const created: Array<string> = []
    for (const name of ["one", "two", "three"]) created.push((await connect({ provider: "openai", api_key: "k", name }, headers)).id)
    const first = await call(gw.baseUrl, "GET", "/v1/provider-connections?limit=2", { headers })
    expect(first.status).toBe(200)
    const page1 = first.body as { data: Array<Connection>; next_cursor: string | null }
    expect(page1.data.map((c) => c.name)).toEqual(["three", "two"])
    expect(page1.next_cursor).toEqual(expect.any(String))
    const second = await call(gw.baseUrl, "GET", `/v1/provider-connections?limit=2&cursor=${page1.next_cursor}`, { headers })
    const page2 = second.body as { data: Array<Connection>; next_cursor: string | null }
    expect(page2.data.map((c) => c.name)).toEqual(["one"])
    expect(page2.next_cursor).toBeNull()
    const bad = await call(gw.baseUrl, "GET", "/v1/provider-connections?cursor=garbage", { headers })
    expect(bad.status).toBe(400)
    const tooMany = await call(gw.baseUrl, "GET", "/v1/provider-connections?limit=101", { headers })
    expect(tooMany.status).toBe(400)
  })

  it("get and delete; other projects' connections are 404", async () => {
    const connection = await openaiConnection()
    const got = await call(gw.baseUrl, "GET", `/v1/provider-connections/${connection.id}`, { headers: auth() })
    expect(got.body).toEqual(connection)
    const other = await gw.createProject()
    const foreign = await call(gw.baseUrl, "GET", `/v1/provider-connections/${connection.id}`, { headers: bearer(other.secretKey) })
    expect(foreign.status).toBe(404)
    const deleted = await call(gw.baseUrl, "DELETE", `/v1/provider-connections/${connection.id}`, { headers: auth() })
    expect(deleted.body).toEqual({ id: connection.id, deleted: true, status: "deleted" })
    expect((await call(gw.baseUrl, "GET", `/v1/provider-connections/${connection.id}`, { headers: auth() })).status).toBe(404)
    expect((await call(gw.baseUrl, "DELETE", `/v1/provider-connections/${connection.id}`, { headers: auth() })).status).toBe(404)
  })

  it("keys are encrypted at rest and never appear in responses or logs", async () => {
    const connection = await openaiConnection()
    await call(gw.baseUrl, "POST", `/v1/provider-connections/${connection.id}/validate`, { headers: auth() })
    await call(gw.baseUrl, "POST", `/v1/provider-connections/${connection.id}/sync`, { headers: auth() })
    const stored = await gw.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ api_key_encrypted: string }>`SELECT api_key_encrypted FROM provider_connections WHERE id = ${connection.id}`
      const dump = yield* sql<{ row: string }>`SELECT row_to_json(c)::text AS row FROM provider_connections c`
      const cipher = rows[0]?.api_key_encrypted ?? ""
      return { cipher, plain: Redacted.value(yield* (yield* SecretBox).decrypt(cipher)), dump: dump.map((r) => r.row).join("\n") }
    }))
    expect(stored.plain).toBe(OPENAI_KEY)
    expect(stored.dump).not.toContain(OPENAI_KEY)
    const listed = await call(gw.baseUrl, "GET", "/v1/provider-connections?limit=100", { headers: auth() })
    expect(listed.text).not.toContain(OPENAI_KEY)
    expect(gw.logs.join("\n")).not.toContain(OPENAI_KEY)
  })
})

describe("validation", () => {
  it("calls GET {base}/models with the bearer key and reports models_discovered (OpenAI format)", async () => {
    const connection = await openaiConnection()
    const before = openai.requests.length
    const res = await call(gw.baseUrl, "POST", `/v1/provider-connections/${connection.id}/validate`, { headers: auth() })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ valid: true, provider: "openai", api_format: "openai", message: expect.any(String), models_discovered: 3 })
    expect(openai.requests.slice(before)).toEqual([
      expect.objectContaining({ method: "GET", path: "/v1/models", headers: expect.objectContaining({ authorization: `Bearer ${OPENAI_KEY}` }) })
    ])
    const after = (await call(gw.baseUrl, "GET", `/v1/provider-connections/${connection.id}`, { headers: auth() })).body as Connection
    expect(after.last_tested_at).toEqual(expect.any(String))
    expect(after.status).toBe("active")
  })

  it("follows Anthropic pages with x-api-key and anthropic-version", async () => {
    const connection = await anthropicConnection()
    const before = anthropic.requests.length
    const res = await call(gw.baseUrl, "POST", `/v1/provider-connections/${connection.id}/validate`, { headers: auth() })
    expect(res.body).toMatchObject({ valid: true, provider: "anthropic", api_format: "anthropic", models_discovered: 5 })
    const sent = anthropic.requests.slice(before)
    expect(sent).toHaveLength(3)
    expect(sent.every((r) => r.path === "/v1/models" && r.headers["x-api-key"] === ANTHROPIC_KEY && r.headers["anthropic-version"] === "2023-06-01")).toBe(true)
    expect(sent.map((r) => r.query.get("after_id"))).toEqual([null, "claude-b", "claude-d"])
  })

  it("a rejected key is valid false and marks the connection invalid, so BYOK stops using it", async () => {
    const project = await gw.createProject()
    const headers = bearer(project.secretKey)
    const connection = await connect({ provider: "openai", api_key: "sk-revoked", base_url: openai.baseUrl }, headers)
    const byok = () => gw.run(Effect.flatMap(ProviderConnections, (s) => s.byokKey(project.id, "openai")))
    expect(Option.isSome(await byok())).toBe(true)
    const res = await call(gw.baseUrl, "POST", `/v1/provider-connections/${connection.id}/validate`, { headers })
    expect(res.body).toEqual({ valid: false, provider: "openai", api_format: "openai", message: expect.stringContaining("401"), models_discovered: 0 })
    const after = (await call(gw.baseUrl, "GET", `/v1/provider-connections/${connection.id}`, { headers })).body as Connection
    expect(after.status).toBe("invalid")
    expect(Option.isNone(await byok())).toBe(true)
  })

  it("a slow upstream is reported as not valid within PROVIDER_LIST_TIMEOUT_MS", async () => {
    const connection = await openaiConnection()
    openai.script.delayMs = 5000
    try {
      const started = Date.now()
      const res = await call(gw.baseUrl, "POST", `/v1/provider-connections/${connection.id}/validate`, { headers: auth() })
      expect(Date.now() - started).toBeLessThan(4000)
      expect(res.body).toMatchObject({ valid: false, message: expect.stringContaining("did not answer"), models_discovered: 0 })
    } finally {
      openai.script.delayMs = 0
    }
    const after = (await call(gw.baseUrl, "GET", `/v1/provider-connections/${connection.id}`, { headers: auth() })).body as Connection
    expect(after.status).toBe("active")
  })

  it("validates a key before storing it (POST /v1/provider-connections/validate)", async () => {
    const res = await call(gw.baseUrl, "POST", "/v1/provider-connections/validate", {
      headers: auth(),
      json: { provider: "anthropic", api_key: ANTHROPIC_KEY, base_url: anthropic.baseUrl }
    })
    expect(res.body).toMatchObject({ valid: true, provider: "anthropic", models_discovered: 5 })
  })

  it("a provider without a listing endpoint is reported as untestable without a call", async () => {
    const connection = await connect({ provider: "deepgram", api_key: "dg-key" })
    const res = await call(gw.baseUrl, "POST", `/v1/provider-connections/${connection.id}/validate`, { headers: auth() })
    expect(res.body).toMatchObject({ valid: false, provider: "deepgram", api_format: "native", models_discovered: 0 })
    const sync = await call(gw.baseUrl, "POST", `/v1/provider-connections/${connection.id}/sync`, { headers: auth() })
    expect(sync.status).toBe(400)
  })
})

describe("model sync", () => {
  interface Sync {
    id: string
    object: string
    connection_id: string
    status: string
    counts: Record<string, number>
    changes: Array<Record<string, unknown>>
    error: string | null
    created_at: string
  }

  it("stores the model list and answers ModelSync with counts and added/removed/updated changes", async () => {
    const fake = await startFakeAnthropic({
      apiKey: ANTHROPIC_KEY,
      models: [{ id: "claude-x", display_name: "Claude X" }, { id: "claude-y", display_name: "Claude Y" }, { id: "claude-z", display_name: "Claude Z" }]
    })
    try {
      const connection = await connect({ provider: "anthropic", api_key: ANTHROPIC_KEY, base_url: fake.baseUrl })
      const sync = async () => {
        const res = await call(gw.baseUrl, "POST", `/v1/provider-connections/${connection.id}/sync`, { headers: auth() })
        expect(res.status).toBe(201)
        return res.body as Sync
      }
      const first = await sync()
      expect(first).toEqual({
        id: expect.stringMatching(/^msync_/),
        object: "model_sync",
        connection_id: connection.id,
        status: "completed",
        counts: { discovered: 3, added: 3, removed: 0, updated: 0, unchanged: 0 },
        changes: [
          { type: "added", model_id: "claude-x", name: "Claude X" },
          { type: "added", model_id: "claude-y", name: "Claude Y" },
          { type: "added", model_id: "claude-z", name: "Claude Z" }
        ],
        error: null,
        created_at: expect.any(String)
      })
      fake.state.models = [
        { id: "claude-x", display_name: "Claude X" },
        { id: "claude-y", display_name: "Claude Y (renamed)" },
        { id: "claude-w", display_name: "Claude W" }
      ]
      const second = await sync()
      expect(second.counts).toEqual({ discovered: 3, added: 1, removed: 1, updated: 1, unchanged: 1 })
      expect(second.changes).toEqual([
        { type: "added", model_id: "claude-w", name: "Claude W" },
        { type: "removed", model_id: "claude-z" },
        { type: "updated", model_id: "claude-y", name: "Claude Y (renamed)", previous_name: "Claude Y" }
      ])
      const stored = await gw.run(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{ model_id: string; name: string }>`
          SELECT model_id, name FROM provider_models WHERE connection_id = ${connection.id} ORDER BY model_id`
      }))
      expect(stored).toEqual([
        { model_id: "claude-w", name: "Claude W" },
        { model_id: "claude-x", name: "Claude X" },
        { model_id: "claude-y", name: "Claude Y (renamed)" }
      ])
      fake.script.failWith = { status: 500, body: { type: "error", error: { type: "api_error", message: "boom" } } }
      const failed = await sync()
      expect(failed).toMatchObject({ status: "failed", counts: {}, changes: [], error: expect.stringContaining("500") })
      fake.script.failWith = null
      const kept = await gw.run(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM provider_models WHERE connection_id = ${connection.id}`
      }))
      expect(kept[0]?.n).toBe(3)

      const listed = await call(gw.baseUrl, "GET", `/v1/provider-connections/${connection.id}/syncs?limit=2`, { headers: auth() })
      const page = listed.body as { data: Array<Sync>; next_cursor: string | null }
      expect(page.data.map((s) => s.id)).toEqual([failed.id, second.id])
      expect(page.next_cursor).toEqual(expect.any(String))
      const rest = await call(gw.baseUrl, "GET", `/v1/provider-connections/${connection.id}/syncs?limit=2&cursor=${page.next_cursor}`, { headers: auth() })
      expect((rest.body as { data: Array<Sync> }).data.map((s) => s.id)).toEqual([first.id])
      const one = await call(gw.baseUrl, "GET", `/v1/provider-connections/${connection.id}/syncs/${second.id}`, { headers: auth() })
      expect(one.body).toEqual(second)
      expect((await call(gw.baseUrl, "GET", `/v1/provider-connections/${connection.id}/syncs/msync_nope`, { headers: auth() })).status).toBe(404)
    } finally {
      await fake.close()
    }
  })
})

describe("ProviderConnections.byokKey", () => {
  it("answers the newest active connection of the provider with its decrypted key", async () => {
    const project = await gw.createProject()
    const headers = bearer(project.secretKey)
    await connect({ provider: "openai", api_key: "sk-older", name: "older" }, headers)
    const newer = await connect({ provider: "openai", api_key: "sk-newer", base_url: openai.baseUrl, name: "newer" }, headers)
    const key = await gw.run(Effect.flatMap(ProviderConnections, (s) => s.byokKey(project.id, "OpenAI")))
    const value = Option.getOrThrow(key)
    expect(value).toMatchObject({ connectionId: newer.id, baseUrl: openai.baseUrl, apiFormat: "openai" })
    expect(Redacted.value(value.apiKey)).toBe("sk-newer")
    expect(String(value.apiKey)).not.toContain("sk-newer")
    expect(Option.isNone(await gw.run(Effect.flatMap(ProviderConnections, (s) => s.byokKey(project.id, "anthropic"))))).toBe(true)
  })
})
