/** Credentials (contract §5) through the real server: each kind accepted where it belongs and refused elsewhere. */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Credentials } from "../../modules/auth/Service.ts"
import { type Gateway, startGateway } from "../harness.ts"
import { bearer, call, serviceKey } from "../http.ts"

let gw: Gateway
let clientToken: string
beforeAll(async () => {
  gw = await startGateway()
  const issued = await call(gw.baseUrl, "POST", "/v1/client-tokens", {
    headers: bearer(gw.project.secretKey),
    json: { external_user_id: "user-42" }
  })
  clientToken = (issued.body as { token: string }).token
})
afterAll(() => gw?.close())

const platform401 = (body: unknown) =>
  expect(body).toMatchObject({ error: { type: "authentication_error", code: "unauthorized" }, status: "failed" })

describe("project secret keys (csk_)", () => {
  it("are 256-bit random, shown once, and stored only as a digest", async () => {
    expect(gw.project.secretKey).toMatch(/^csk_[A-Za-z0-9_-]{43}$/)
    const rows = await gw.run(Effect.flatMap(Credentials, (c) => c.listKeys(gw.project.id)))
    expect(JSON.stringify(rows)).not.toContain(gw.project.secretKey.slice(4))
  })

  it("are accepted as Bearer on platform operations", async () => {
    const res = await call(gw.baseUrl, "GET", "/v1/api-keys", { headers: bearer(gw.project.secretKey) })
    expect(res.status).toBe(200)
  })

  it("are refused when missing, wrong, or sent in the wrong header", async () => {
    for (const headers of [{}, bearer("csk_" + "A".repeat(43)), bearer(""), { authorization: "Basic Zm9vOmJhcg==" }, serviceKey(gw.project.secretKey)]) {
      const res = await call(gw.baseUrl, "GET", "/v1/api-keys", { headers })
      expect(res.status).toBe(401)
      platform401(res.body)
    }
  })
})

describe("project API keys (sak_)", () => {
  it("are refused on secret-key operations, as Bearer and as SERVICE_API_KEY", async () => {
    for (const headers of [bearer(gw.project.apiKey), serviceKey(gw.project.apiKey)]) {
      expect((await call(gw.baseUrl, "GET", "/v1/api-keys", { headers })).status).toBe(401)
      expect((await call(gw.baseUrl, "POST", "/v1/client-tokens", { headers, json: {} })).status).toBe(401)
    }
  })

  it("are accepted in the SERVICE_API_KEY header and as Bearer where API keys belong", async () => {
    for (const headers of [serviceKey(gw.project.apiKey), bearer(gw.project.apiKey)]) {
      const res = await call(gw.baseUrl, "GET", "/v1/project", { headers })
      expect(res.status).toBe(200)
      expect(res.body).toMatchObject({ id: gw.project.id, credential: "api" })
    }
  })

  it("are shown once at creation, listed by prefix only, and stop working when revoked", async () => {
    const created = await call(gw.baseUrl, "POST", "/v1/api-keys", { headers: bearer(gw.project.secretKey), json: { name: "ci" } })
    expect(created.status).toBe(201)
    const key = created.body as { id: string; key: string; key_prefix: string }
    expect(key.key).toMatch(/^sak_/)
    expect(key.key.startsWith(key.key_prefix)).toBe(true)
    const listed = await call(gw.baseUrl, "GET", "/v1/api-keys", { headers: bearer(gw.project.secretKey) })
    expect(listed.text).not.toContain(key.key)
    expect((await call(gw.baseUrl, "GET", "/v1/project", { headers: serviceKey(key.key) })).status).toBe(200)
    const revoked = await call(gw.baseUrl, "DELETE", `/v1/api-keys/${key.id}`, { headers: bearer(gw.project.secretKey) })
    expect(revoked.body).toEqual({ id: key.id, deleted: true, status: "revoked" })
    expect((await call(gw.baseUrl, "GET", "/v1/project", { headers: serviceKey(key.key) })).status).toBe(401)
  })

  it("another project's key id answers 404, never revealing that it exists", async () => {
    const other = await gw.createProject()
    const created = await call(gw.baseUrl, "POST", "/v1/api-keys", { headers: bearer(other.secretKey), json: {} })
    const id = (created.body as { id: string }).id
    const res = await call(gw.baseUrl, "DELETE", `/v1/api-keys/${id}`, { headers: bearer(gw.project.secretKey) })
    expect(res.status).toBe(404)
    expect(res.body).toMatchObject({ error: { code: "not_found" }, status: "failed" })
    expect((await call(gw.baseUrl, "GET", "/v1/project", { headers: serviceKey((created.body as { key: string }).key) })).status).toBe(200)
  })
})

describe("client tokens (ect_)", () => {
  it("are issued with the secret key in the ClientToken shape", async () => {
    const res = await call(gw.baseUrl, "POST", "/v1/client-tokens", { headers: bearer(gw.project.secretKey), json: {} })
    expect(res.status).toBe(201)
    const token = res.body as { token: string; expires_at: string }
    expect(Object.keys(token).sort()).toEqual(["expires_at", "token"])
    expect(token.token).toMatch(/^ect_[A-Za-z0-9_-]{43}$/)
    const ttl = new Date(token.expires_at).getTime() - Date.now()
    expect(ttl).toBeGreaterThan(800_000)
    expect(ttl).toBeLessThanOrEqual(900_000)
  })

  it("authenticate browser execution as Bearer, carrying the end user", async () => {
    const res = await call(gw.baseUrl, "GET", "/v1/project", { headers: bearer(clientToken) })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ credential: "client", external_user_id: "user-42" })
  })

  it("are refused on server operations and in the SERVICE_API_KEY header", async () => {
    expect((await call(gw.baseUrl, "GET", "/v1/api-keys", { headers: bearer(clientToken) })).status).toBe(401)
    expect((await call(gw.baseUrl, "POST", "/v1/client-tokens", { headers: bearer(clientToken), json: {} })).status).toBe(401)
    expect((await call(gw.baseUrl, "GET", "/v1/project", { headers: serviceKey(clientToken) })).status).toBe(401)
  })

  it("expire", async () => {
    const issued = await gw.run(Effect.flatMap(Credentials, (c) =>
      c.issueClientToken(gw.project.id, { tenantId: null, externalUserId: null, ttlSeconds: -1 })))
    expect((await call(gw.baseUrl, "GET", "/v1/project", { headers: bearer(issued.token) })).status).toBe(401)
  })

  it("lifetime is bounded: 60 s to 24 h", async () => {
    for (const [expires_in, status] of [[59, 400], [60, 201], [86_400, 201], [86_401, 400]] as const) {
      const res = await call(gw.baseUrl, "POST", "/v1/client-tokens", { headers: bearer(gw.project.secretKey), json: { expires_in } })
      expect(res.status).toBe(status)
    }
  })
})

describe("dashboard users (session cookie)", () => {
  const login = async (email: string, password: string) =>
    call(gw.baseUrl, "POST", "/api/auth/login", { json: { email, password } })

  it("login sets an HttpOnly SameSite cookie; me and logout use it", async () => {
    const user = await gw.createUser(gw.project.id)
    const res = await login(user.email, user.password)
    expect(res.status).toBe(200)
    const cookie = res.headers.get("set-cookie") ?? ""
    expect(cookie).toMatch(/^eap_session=ds_[A-Za-z0-9_-]{43};/)
    expect(cookie).toMatch(/HttpOnly/i)
    expect(cookie).toMatch(/SameSite=Lax/i)
    expect(cookie).toMatch(/Path=\//)
    const session = cookie.split(";")[0]!
    const me = await call(gw.baseUrl, "GET", "/api/auth/me", { headers: { cookie: session } })
    expect(me.status).toBe(200)
    expect(me.body).toEqual({ user: { id: expect.any(String), email: user.email, projects: [{ id: gw.project.id, name: expect.any(String) }] } })
    const out = await call(gw.baseUrl, "POST", "/api/auth/logout", { headers: { cookie: session } })
    expect(out.status).toBe(200)
    const after = await call(gw.baseUrl, "GET", "/api/auth/me", { headers: { cookie: session } })
    expect(after.status).toBe(401)
    expect(after.body).toEqual({ error: expect.any(String) })
  })

  it("a wrong password and an unknown email answer the same 401", async () => {
    const user = await gw.createUser(gw.project.id)
    const wrong = await login(user.email, "not the password")
    const unknown = await login("ghost@example.com", "not the password")
    expect(wrong.status).toBe(401)
    expect(unknown.status).toBe(401)
    expect(wrong.body).toEqual(unknown.body)
  })

  it("passwords are stored with a memory-hard hash", async () => {
    const user = await gw.createUser(gw.project.id)
    const stored = await gw.run(Effect.gen(function*() {
      const sql = yield* (yield* Effect.promise(() => import("@effect/sql"))).SqlClient.SqlClient
      const rows = yield* sql<{ password_hash: string }>`SELECT password_hash FROM users WHERE email = ${user.email}`
      return rows[0]!.password_hash
    }))
    expect(stored).toMatch(/^scrypt\$32768\$8\$1\$/)
    expect(stored).not.toContain(user.password)
  })

  it("project keys are refused on dashboard paths, and another project's id answers 404", async () => {
    expect((await call(gw.baseUrl, "GET", `/api/projects/${gw.project.id}`, { headers: bearer(gw.project.secretKey) })).status).toBe(401)
    const user = await gw.createUser(gw.project.id)
    const session = ((await login(user.email, user.password)).headers.get("set-cookie") ?? "").split(";")[0]!
    const own = await call(gw.baseUrl, "GET", `/api/projects/${gw.project.id}`, { headers: { cookie: session } })
    expect(own.status).toBe(200)
    const other = await gw.createProject()
    for (const id of [other.id, "proj_does_not_exist"]) {
      const res = await call(gw.baseUrl, "GET", `/api/projects/${id}`, { headers: { cookie: session } })
      expect(res.status).toBe(404)
      expect(res.body).toEqual({ error: "Project not found" })
    }
  })
})

describe("logs", () => {
  it("never contain a key, token, password or cookie", async () => {
    const user = await gw.createUser(gw.project.id, undefined, "a very secret password")
    const session = ((await login(user.email, "a very secret password")).headers.get("set-cookie") ?? "").split(";")[0]!
    await call(gw.baseUrl, "GET", "/api/auth/me", { headers: { cookie: session } })
    await call(gw.baseUrl, "GET", "/v1/project?token=" + gw.project.apiKey, { headers: serviceKey(gw.project.apiKey) })
    const all = gw.logs.join("\n")
    expect(gw.logs.length).toBeGreaterThan(5)
    for (const secret of [gw.project.secretKey, gw.project.apiKey, clientToken, "a very secret password", session.split("=")[1]!]) {
      expect(all).not.toContain(secret)
    }
    const line = JSON.parse(gw.logs.find((l) => l.includes("/v1/project"))!) as Record<string, unknown>
    expect(line).toMatchObject({ level: "info", message: "request", method: "GET", route: "/v1/project", status: 200 })
    expect(line.request_id).toMatch(/^req_/)
    expect(typeof line.duration_ms).toBe("number")
  })

  async function login(email: string, password: string) {
    return call(gw.baseUrl, "POST", "/api/auth/login", { json: { email, password } })
  }
})
