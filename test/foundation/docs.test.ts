import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Gateway, startGateway } from "../harness.ts"
import { call } from "../http.ts"

let gw: Gateway
beforeAll(async () => {
  gw = await startGateway()
})
afterAll(() => gw?.close())

describe("self-description and probes", () => {
  it("serves an OpenAPI 3.1 document generated from the HttpApi definitions", async () => {
    const res = await call(gw.baseUrl, "GET", "/openapi.json")
    expect(res.status).toBe(200)
    const doc = res.body as { openapi: string; info: { version: string }; paths: Record<string, Record<string, unknown>> }
    expect(doc.openapi).toBe("3.1.0")
    expect(doc.info.version).toBe("1.1.0")
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/healthz", "/readyz", "/v1/client-tokens", "/api/auth/login"]))
    // Error responses are documented with the real wire envelope, not the framework's.
    const errors = JSON.stringify(doc.paths["/v1/client-tokens"])
    expect(errors).toContain("\"401\"")
    expect(JSON.stringify(doc)).toContain("PlatformError")
  })

  it("serves a reference page at /docs", async () => {
    const res = await fetch(`${gw.baseUrl}/docs`)
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toContain("text/html")
    expect(await res.text()).toContain("Embedded Agents Gateway")
  })

  it("/healthz is liveness and /readyz reports the reachable database", async () => {
    expect((await call(gw.baseUrl, "GET", "/healthz")).body).toEqual({ status: "ok" })
    const ready = await call(gw.baseUrl, "GET", "/readyz")
    expect(ready.status).toBe(200)
    expect(ready.body).toEqual({ status: "ok", database: process.env.TEST_DATABASE_URL ? "postgres" : "pglite" })
  })
})
