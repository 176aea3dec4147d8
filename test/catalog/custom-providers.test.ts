import { SqlClient } from "@effect/sql"
import { ConfigProvider, Effect, Option, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { settingsConfig } from "../../layers/config.ts"
import { SecretBox } from "../../layers/crypto.ts"
import { CustomProviders } from "../../modules/custom-providers/Service.ts"
import { type FakeAnthropic, startFakeAnthropic } from "../fakes/catalog-anthropic.ts"
import { type FakeOpenAI, startFakeOpenAI } from "../fakes/catalog-openai.ts"
import { type Gateway, startGateway } from "../harness.ts"
import { call, serviceKey } from "../http.ts"
import { signIn } from "./dashboard.ts"

const OPENAI_KEY = "sk-custom-provider-secret-0123456789"
const ANTHROPIC_KEY = "sk-ant-custom-secret-9876543210"

let gw: Gateway
let openai: FakeOpenAI
let anthropic: FakeAnthropic
let session: Record<string, string>
beforeAll(async () => {
  openai = await startFakeOpenAI({
    apiKey: OPENAI_KEY,
    models: [{ id: "llama3:8b" }, { id: "qwen2.5:7b" }, { id: "gpt-3.5-turbo" }]
  })
  anthropic = await startFakeAnthropic({ apiKey: ANTHROPIC_KEY, models: [{ id: "claude-local", display_name: "Claude Local" }] })
  gw = await startGateway({ env: { CUSTOM_PROVIDER_TEST_TIMEOUT_MS: "1000" } })
  session = await signIn(gw, gw.project.id)
})
afterAll(async () => {
  await gw?.close()
  await openai?.close()
  await anthropic?.close()
})

const base = () => `/api/projects/${gw.project.id}`

type ProviderBody = { provider: Record<string, unknown> & { id: string } }

const createProvider = async (body: Record<string, unknown>, headers = session) => {
  const res = await call(gw.baseUrl, "POST", `${base()}/providers`, { headers, json: body })
  return res
}

const newProvider = async (overrides: Record<string, unknown> = {}) => {
  const res = await createProvider({
    name: `local-${Math.random().toString(36).slice(2, 8)}`,
    baseUrl: openai.baseUrl,
    apiKey: OPENAI_KEY,
    format: "openai",
    models: [{ name: "Llama 3 8B", modelId: "llama3:8b" }, { name: "Qwen 2.5", modelId: "qwen2.5:7b" }],
    ...overrides
  })
  expect(res.status).toBe(201)
  return (res.body as ProviderBody).provider
}

describe("custom provider management", () => {
  it("needs the dashboard session of a project member: no cookie 401, project keys 401, other members 404", async () => {
    const anonymous = await call(gw.baseUrl, "GET", `${base()}/providers`)
    expect(anonymous.status).toBe(401)
    expect(anonymous.body).toEqual({ error: expect.any(String) })
    const withApiKey = await call(gw.baseUrl, "GET", `${base()}/providers`, { headers: serviceKey(gw.project.apiKey) })
    expect(withApiKey.status).toBe(401)
    const other = await gw.createProject()
    const outsider = await signIn(gw, other.id)
    const res = await call(gw.baseUrl, "GET", `${base()}/providers`, { headers: outsider })
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ error: "Project not found" })
  })

  it("create answers 201 with the provider and never the key", async () => {
    const res = await createProvider({
      name: "ollama-create",
      baseUrl: `${openai.baseUrl}/`,
      apiKey: OPENAI_KEY,
      format: "openai",
      models: [{ name: "Llama 3", modelId: "llama3:8b" }]
    })
    expect(res.status).toBe(201)
    expect(res.body).toEqual({
      provider: {
        id: expect.stringMatching(/^cprov_/),
        name: "ollama-create",
        base_url: openai.baseUrl,
        api_format: "openai",
        is_active: true,
        has_api_key: true,
        created_at: expect.any(String)
      }
    })
    expect(res.text).not.toContain(OPENAI_KEY)
  })

  it("create rejects missing or invalid fields with 400 {error}", async () => {
    const cases: Array<Record<string, unknown>> = [
      { baseUrl: openai.baseUrl, format: "openai" },
      { name: "x", format: "openai" },
      { name: "x", baseUrl: openai.baseUrl },
      { name: "x", baseUrl: openai.baseUrl, format: "gemini" },
      { name: "x", baseUrl: "ftp://example.com", format: "openai" },
      { name: "x", baseUrl: "not a url", format: "openai" },
      { name: "x", baseUrl: "http://user:pass@example.com/v1", format: "openai" },
      { name: "   ", baseUrl: openai.baseUrl, format: "openai" },
      { name: "x", baseUrl: openai.baseUrl, format: "openai", models: [{ name: "a", modelId: "" }] }
    ]
    for (const body of cases) {
      const res = await createProvider(body)
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(res.body, JSON.stringify(body)).toEqual({ error: expect.any(String) })
    }
  })

  it("a provider name is unique in the project (it routes models)", async () => {
    await newProvider({ name: "dup-name" })
    const res = await createProvider({ name: "DUP-NAME", baseUrl: openai.baseUrl, format: "openai" })
    expect(res.status).toBe(400)
    expect((res.body as { error: string }).error).toMatch(/already exists/)
  })

  it("list answers providers newest first, each with custom_models", async () => {
    const project = await gw.createProject()
    const owner = await signIn(gw, project.id)
    const path = `/api/projects/${project.id}/providers`
    for (const name of ["first", "second", "third"]) {
      const res = await call(gw.baseUrl, "POST", path, {
        headers: owner,
        json: { name, baseUrl: openai.baseUrl, format: "openai", models: [{ name: `${name} model`, modelId: `${name}-id` }] }
      })
      expect(res.status).toBe(201)
    }
    const res = await call(gw.baseUrl, "GET", path, { headers: owner })
    expect(res.status).toBe(200)
    const providers = (res.body as { providers: Array<{ name: string; custom_models: Array<unknown> }> }).providers
    expect(providers.map((p) => p.name)).toEqual(["third", "second", "first"])
    expect(providers[0]?.custom_models).toEqual([{ id: expect.stringMatching(/^cmod_/), model_name: "third-id", display_name: "third model" }])
    expect(res.text).not.toMatch(/"api_?key(_encrypted)?"/i)
  })

  it("get answers the provider with models including is_active; 404 when unknown or in another project", async () => {
    const provider = await newProvider()
    const res = await call(gw.baseUrl, "GET", `${base()}/providers/${provider.id}`, { headers: session })
    expect(res.status).toBe(200)
    const body = res.body as { provider: { custom_models: Array<Record<string, unknown>> } }
    expect(body.provider).toMatchObject({ id: provider.id, base_url: openai.baseUrl, api_format: "openai", is_active: true })
    expect(body.provider.custom_models).toEqual([
      { id: expect.any(String), model_name: "llama3:8b", display_name: "Llama 3 8B", is_active: true },
      { id: expect.any(String), model_name: "qwen2.5:7b", display_name: "Qwen 2.5", is_active: true }
    ])
    const missing = await call(gw.baseUrl, "GET", `${base()}/providers/cprov_nothing`, { headers: session })
    expect(missing.status).toBe(404)
    expect(missing.body).toEqual({ error: "Provider not found" })
    const other = await gw.createProject()
    const otherSession = await signIn(gw, other.id)
    const foreign = await call(gw.baseUrl, "GET", `/api/projects/${other.id}/providers/${provider.id}`, { headers: otherSession })
    expect(foreign.status).toBe(404)
  })

  it("PATCH updates name, baseUrl, isActive and format", async () => {
    const provider = await newProvider()
    const res = await call(gw.baseUrl, "PATCH", `${base()}/providers/${provider.id}`, {
      headers: session,
      json: { name: "renamed-provider", baseUrl: anthropic.baseUrl, isActive: false, format: "anthropic" }
    })
    expect(res.status).toBe(200)
    expect((res.body as ProviderBody).provider).toMatchObject({
      id: provider.id,
      name: "renamed-provider",
      base_url: anthropic.baseUrl,
      api_format: "anthropic",
      is_active: false
    })
    const bad = await call(gw.baseUrl, "PATCH", `${base()}/providers/${provider.id}`, { headers: session, json: { format: "soap" } })
    expect(bad.status).toBe(400)
    const missing = await call(gw.baseUrl, "PATCH", `${base()}/providers/cprov_missing`, { headers: session, json: { isActive: true } })
    expect(missing.status).toBe(404)
  })

  it("DELETE removes the provider and all its models", async () => {
    const provider = await newProvider()
    const res = await call(gw.baseUrl, "DELETE", `${base()}/providers/${provider.id}`, { headers: session })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ success: true })
    expect((await call(gw.baseUrl, "GET", `${base()}/providers/${provider.id}`, { headers: session })).status).toBe(404)
    const left = await gw.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM custom_models WHERE provider_id = ${provider.id}`
    }))
    expect(left[0]?.n).toBe(0)
    expect((await call(gw.baseUrl, "DELETE", `${base()}/providers/${provider.id}`, { headers: session })).status).toBe(404)
  })

  it("the API key is encrypted at rest with the master key and never appears in responses or logs", async () => {
    const provider = await newProvider({ name: "secret-holder" })
    const stored = await gw.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ api_key_encrypted: string }>`SELECT api_key_encrypted FROM custom_providers WHERE id = ${provider.id}`
      const box = yield* SecretBox
      const cipher = rows[0]?.api_key_encrypted ?? ""
      return { cipher, plain: Redacted.value(yield* box.decrypt(cipher)) }
    }))
    expect(stored.cipher).toMatch(/^v1\./)
    expect(stored.cipher).not.toContain(OPENAI_KEY)
    expect(stored.plain).toBe(OPENAI_KEY)
    const listed = await call(gw.baseUrl, "GET", `${base()}/providers`, { headers: session })
    const got = await call(gw.baseUrl, "GET", `${base()}/providers/${provider.id}`, { headers: session })
    const tested = await call(gw.baseUrl, "POST", `${base()}/custom-providers/test`, { headers: session, json: { provider_id: provider.id } })
    for (const res of [listed, got, tested]) expect(res.text).not.toContain(OPENAI_KEY)
    expect(gw.logs.join("\n")).not.toContain(OPENAI_KEY)
    expect(gw.logs.join("\n")).not.toContain(stored.cipher)
  })
})

describe("POST /custom-providers/test", () => {
  const test = (json: Record<string, unknown>) => call(gw.baseUrl, "POST", `${base()}/custom-providers/test`, { headers: session, json })

  it("a stored OpenAI-format provider: one chat completion with max_tokens 5 to {base}/chat/completions, first model", async () => {
    const provider = await newProvider()
    const before = openai.requests.length
    const res = await test({ provider_id: provider.id })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      success: true,
      message: expect.any(String),
      latency_ms: expect.any(Number),
      response: { model: "llama3:8b", content: "ok", usage: { prompt_tokens: 12, completion_tokens: 1, total_tokens: 13 } }
    })
    const sent = openai.requests.slice(before)
    expect(sent).toHaveLength(1)
    expect(sent[0]).toMatchObject({ method: "POST", path: "/v1/chat/completions" })
    expect(sent[0]?.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`)
    expect(sent[0]?.body).toMatchObject({ model: "llama3:8b", max_tokens: 5, messages: [{ role: "user", content: expect.any(String) }] })
  })

  it("model overrides the first registered model", async () => {
    const provider = await newProvider()
    const res = await test({ provider_id: provider.id, model: "qwen2.5:7b" })
    expect(res.body).toMatchObject({ success: true, response: { model: "qwen2.5:7b" } })
  })

  it("ad hoc mode defaults to the openai format and model gpt-3.5-turbo", async () => {
    const before = openai.requests.length
    const res = await test({ base_url: openai.baseUrl, api_key: OPENAI_KEY })
    expect(res.body).toMatchObject({ success: true, response: { model: "gpt-3.5-turbo" } })
    expect(openai.requests[before]?.body).toMatchObject({ model: "gpt-3.5-turbo", max_tokens: 5 })
  })

  it("the Anthropic format sends {base}/messages with x-api-key and anthropic-version", async () => {
    const before = anthropic.requests.length
    const res = await test({ base_url: anthropic.baseUrl, api_format: "anthropic", model: "claude-local", api_key: ANTHROPIC_KEY })
    expect(res.body).toEqual({
      success: true,
      message: expect.any(String),
      latency_ms: expect.any(Number),
      response: { model: "claude-local", content: "ok", usage: { prompt_tokens: 14, completion_tokens: 2, total_tokens: 16 } }
    })
    const sent = anthropic.requests[before]
    expect(sent).toMatchObject({ method: "POST", path: "/v1/messages" })
    expect(sent?.headers["x-api-key"]).toBe(ANTHROPIC_KEY)
    expect(sent?.headers["anthropic-version"]).toBe("2023-06-01")
    expect(sent?.body).toMatchObject({ model: "claude-local", max_tokens: 5 })
  })

  it("a provider error answers success false with the status, the body and latency_ms", async () => {
    const res = await test({ base_url: openai.baseUrl, api_key: "sk-wrong" })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ success: false, error: expect.stringContaining("401"), latency_ms: expect.any(Number) })
    expect((res.body as { error: string }).error).toContain("Incorrect API key provided")
    openai.script.failWith = { status: 503, body: { error: { message: "overloaded", type: "server_error", param: null, code: null } } }
    try {
      const failed = await test({ base_url: openai.baseUrl, api_key: OPENAI_KEY })
      expect(failed.body).toEqual({ success: false, error: expect.stringMatching(/503.*overloaded/), latency_ms: expect.any(Number) })
    } finally {
      openai.script.failWith = null
    }
  })

  it("a timeout answers success false with an error and no latency (limit from CUSTOM_PROVIDER_TEST_TIMEOUT_MS)", async () => {
    openai.script.delayMs = 5000
    try {
      const started = Date.now()
      const res = await test({ base_url: openai.baseUrl, api_key: OPENAI_KEY })
      expect(Date.now() - started).toBeLessThan(4000)
      expect(res.status).toBe(200)
      expect(res.body).toEqual({ success: false, error: expect.stringMatching(/timed out/) })
    } finally {
      openai.script.delayMs = 0
    }
  })

  it("the limit defaults to 30 seconds", async () => {
    const settings = await Effect.runPromise(
      Effect.withConfigProvider(settingsConfig, ConfigProvider.fromMap(new Map()))
    )
    expect(settings.customProviderTestTimeoutMs).toBe(30_000)
    expect(settings.allowPrivateProviderUrls).toBe(true)
  })

  it("ad hoc mode needs base_url; an unknown provider_id is 404", async () => {
    const missing = await test({ api_format: "openai" })
    expect(missing.status).toBe(400)
    expect(missing.body).toEqual({ error: expect.stringContaining("base_url") })
    const unknown = await test({ provider_id: "cprov_unknown" })
    expect(unknown.status).toBe(404)
  })
})

describe("routing resolution (CustomProviders.resolve)", () => {
  const resolve = (name: string) =>
    gw.run(Effect.flatMap(CustomProviders, (s) => s.resolve(gw.project.id, name)))

  it("matches the provider name (first active model), a model id or a display name", async () => {
    const provider = await newProvider({ name: "resolver-one" })
    const byName = Option.getOrThrow(await resolve("Resolver-One"))
    expect(byName).toMatchObject({ providerId: provider.id, name: "resolver-one", baseUrl: openai.baseUrl, apiFormat: "openai", upstreamModel: "llama3:8b" })
    expect(Option.map(byName.apiKey, Redacted.value)).toEqual(Option.some(OPENAI_KEY))
    expect(Option.getOrThrow(await resolve("qwen2.5:7b")).upstreamModel).toBe("qwen2.5:7b")
    expect(Option.getOrThrow(await resolve("Qwen 2.5")).upstreamModel).toBe("qwen2.5:7b")
    expect(Option.isNone(await resolve("no-such-model-anywhere"))).toBe(true)
  })

  it("skips inactive providers, and fails to resolve after deletion", async () => {
    const project = await gw.createProject()
    const owner = await signIn(gw, project.id)
    const path = `/api/projects/${project.id}/providers`
    const created = await call(gw.baseUrl, "POST", path, {
      headers: owner,
      json: { name: "switchable", baseUrl: openai.baseUrl, format: "openai", models: [{ name: "Only", modelId: "only-model" }] }
    })
    const id = (created.body as ProviderBody).provider.id
    const resolveIn = (name: string) => gw.run(Effect.flatMap(CustomProviders, (s) => s.resolve(project.id, name)))
    expect(Option.isSome(await resolveIn("only-model"))).toBe(true)
    expect(Option.getOrThrow(await resolveIn("switchable")).apiKey).toEqual(Option.none())
    await call(gw.baseUrl, "PATCH", `${path}/${id}`, { headers: owner, json: { isActive: false } })
    expect(Option.isNone(await resolveIn("only-model"))).toBe(true)
    expect(Option.isNone(await resolveIn("switchable"))).toBe(true)
    await call(gw.baseUrl, "PATCH", `${path}/${id}`, { headers: owner, json: { isActive: true } })
    expect(Option.isSome(await resolveIn("only-model"))).toBe(true)
    await call(gw.baseUrl, "DELETE", `${path}/${id}`, { headers: owner })
    expect(Option.isNone(await resolveIn("only-model"))).toBe(true)
  })
})

describe("private-network base URLs", () => {
  let strict: Gateway
  let strictSession: Record<string, string>
  beforeAll(async () => {
    strict = await startGateway({ env: { ALLOW_PRIVATE_PROVIDER_URLS: "false" } })
    strictSession = await signIn(strict, strict.project.id)
  })
  afterAll(() => strict?.close())

  it("are allowed by default (self-hosted models live there)", async () => {
    const provider = await newProvider({ baseUrl: "http://192.168.1.20:11434/v1" })
    expect(provider.base_url).toBe("http://192.168.1.20:11434/v1")
  })

  it("are rejected with 400 when ALLOW_PRIVATE_PROVIDER_URLS=false, on create, update and test", async () => {
    const path = `/api/projects/${strict.project.id}`
    for (const baseUrl of ["http://127.0.0.1:11434/v1", "http://localhost:8000/v1", "http://10.0.0.5/v1", "http://[::1]:8080/v1", "http://169.254.169.254/latest", "http://[::ffff:192.168.0.1]/v1"]) {
      const res = await call(strict.baseUrl, "POST", `${path}/providers`, {
        headers: strictSession,
        json: { name: "blocked", baseUrl, format: "openai" }
      })
      expect(res.status, baseUrl).toBe(400)
      expect((res.body as { error: string }).error, baseUrl).toMatch(/private network/)
    }
    const ok = await call(strict.baseUrl, "POST", `${path}/providers`, {
      headers: strictSession,
      json: { name: "public", baseUrl: "https://93.184.216.34/v1", format: "openai" }
    })
    expect(ok.status).toBe(201)
    const id = (ok.body as ProviderBody).provider.id
    const patched = await call(strict.baseUrl, "PATCH", `${path}/providers/${id}`, {
      headers: strictSession,
      json: { baseUrl: "http://127.0.0.1:9/v1" }
    })
    expect(patched.status).toBe(400)
    const before = openai.requests.length
    const tested = await call(strict.baseUrl, "POST", `${path}/custom-providers/test`, {
      headers: strictSession,
      json: { base_url: openai.baseUrl }
    })
    expect(tested.status).toBe(400)
    expect(openai.requests.length).toBe(before)
  })
})
