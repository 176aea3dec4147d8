import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Gateway, startGateway } from "../harness.ts"
import { bearer, call } from "../http.ts"

let gw: Gateway
beforeAll(async () => {
  gw = await startGateway({ env: { MAX_BODY_BYTES: "4096" } })
})
afterAll(() => gw?.close())

const expectPlatform = (body: unknown, status: { code: string; type?: string }, requestId: string | null) => {
  expect(body).toEqual({
    error: {
      type: status.type ?? expect.any(String),
      code: status.code,
      message: expect.any(String),
      request_id: requestId,
      param: expect.toSatisfy((v: unknown) => v === null || typeof v === "string")
    },
    status: "failed"
  })
}

describe("error envelopes", () => {
  it("every response carries X-Request-Id, and the platform envelope repeats it", async () => {
    const res = await call(gw.baseUrl, "GET", "/v1/no-such-thing")
    const id = res.headers.get("x-request-id")
    expect(id).toMatch(/^req_[0-9a-f]{24}$/)
    expect(res.status).toBe(404)
    expectPlatform(res.body, { code: "not_found", type: "not_found_error" }, id)
    const ok = await call(gw.baseUrl, "GET", "/healthz")
    expect(ok.headers.get("x-request-id")).toMatch(/^req_/)
  })

  it("keeps a well-formed incoming X-Request-Id", async () => {
    const res = await call(gw.baseUrl, "GET", "/v1/nothing", { headers: { "x-request-id": "client-abc.123" } })
    expect(res.headers.get("x-request-id")).toBe("client-abc.123")
    expect((res.body as { error: { request_id: string } }).error.request_id).toBe("client-abc.123")
  })

  it("a wrong method answers 405 with Allow in the platform envelope", async () => {
    const res = await call(gw.baseUrl, "PUT", "/v1/api-keys", { headers: bearer(gw.project.secretKey) })
    expect(res.status).toBe(405)
    expect(res.headers.get("allow")).toContain("GET")
    expect(res.headers.get("allow")).toContain("POST")
    expectPlatform(res.body, { code: "method_not_allowed" }, res.headers.get("x-request-id"))
  })

  it("malformed JSON answers 400 invalid_json", async () => {
    const res = await call(gw.baseUrl, "POST", "/v1/api-keys", { headers: bearer(gw.project.secretKey), body: "{\"name\": " })
    expect(res.status).toBe(400)
    expectPlatform(res.body, { code: "invalid_json", type: "invalid_request_error" }, res.headers.get("x-request-id"))
  })

  it("a schema violation answers 400 invalid_request naming the field", async () => {
    const res = await call(gw.baseUrl, "POST", "/v1/client-tokens", {
      headers: bearer(gw.project.secretKey),
      json: { expires_in: 5 }
    })
    expect(res.status).toBe(400)
    expectPlatform(res.body, { code: "invalid_request", type: "invalid_request_error" }, res.headers.get("x-request-id"))
    expect((res.body as { error: { param: string } }).error.param).toBe("expires_in")
  })

  it("a body over the limit answers 413 without being read", async () => {
    const res = await call(gw.baseUrl, "POST", "/v1/api-keys", {
      headers: bearer(gw.project.secretKey),
      json: { name: "x".repeat(5000) }
    })
    expect(res.status).toBe(413)
    expectPlatform(res.body, { code: "payload_too_large" }, res.headers.get("x-request-id"))
  })

  it("a body at the limit is accepted", async () => {
    const name = "n".repeat(150)
    const padding = " ".repeat(4096 - JSON.stringify({ name }).length)
    const body = JSON.stringify({ name }) + padding
    expect(Buffer.byteLength(body)).toBe(4096)
    const res = await call(gw.baseUrl, "POST", "/v1/api-keys", { headers: bearer(gw.project.secretKey), body })
    expect(res.status).toBe(201)
  })

  it("custom-provider and dashboard paths use {error: message}", async () => {
    const res = await call(gw.baseUrl, "POST", "/api/auth/login", { json: { email: "nobody@example.com", password: "wrongwrong" } })
    expect(res.status).toBe(401)
    expect(res.body).toEqual({ error: expect.any(String) })
    const unknown = await call(gw.baseUrl, "GET", "/api/projects/p1/nowhere")
    expect(unknown.status).toBe(404)
    expect(unknown.body).toEqual({ error: expect.any(String) })
  })

  it("web paths use {error: code, message, details}", async () => {
    const res = await call(gw.baseUrl, "GET", "/api/v1/web/nowhere")
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ error: "not_found", message: expect.any(String), details: {} })
  })

  it("AI paths use the flat envelope {error: code, message, request_id}", async () => {
    const res = await call(gw.baseUrl, "GET", "/api/ai/nowhere")
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ error: "not_found", message: expect.any(String), request_id: res.headers.get("x-request-id") })
  })

  it("never answers with an empty body or a stack trace", async () => {
    for (const [method, path] of [["POST", "/v1/x"], ["DELETE", "/healthz"], ["POST", "/api/auth/login"]] as const) {
      const res = await call(gw.baseUrl, method, path, { body: "{" })
      expect(res.text.length).toBeGreaterThan(0)
      expect(res.text).not.toMatch(/\n\s+at /)
    }
  })
})

describe("defects", () => {
  it("an unexpected defect answers 500 in the envelope, without a stack trace, and is logged", async () => {
    const { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpServer } = await import("@effect/platform")
    const { ConfigProvider, Effect, Layer, Logger } = await import("effect")
    const { AppConfig } = await import("../../layers/config.ts")
    const { ApiGuardLive } = await import("../../layers/http/errors.ts")
    class Boom extends HttpApi.make("boom").add(
      HttpApiGroup.make("boom").add(HttpApiEndpoint.get("explode", "/v1/explode")).add(HttpApiEndpoint.get("fine", "/api/ai/explode"))
    ) {}
    const logged: Array<string> = []
    const handlers = HttpApiBuilder.group(Boom, "boom", (h) =>
      h.handle("explode", () => Effect.die(new Error("secret internals at /srv/app.ts:12")))
        .handle("fine", () => Effect.die("string defect")))
    const app = Layer.mergeAll(HttpApiBuilder.api(Boom).pipe(Layer.provide(handlers)), HttpServer.layerContext)
    const { dispose, handler } = HttpApiBuilder.toWebHandler(
      Layer.mergeAll(app, ApiGuardLive.pipe(Layer.provide(app))).pipe(
        Layer.provide(AppConfig.layer.pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map()))))),
        Layer.provide(Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => logged.push(String(message)))))
      )
    )
    try {
      const platform = await handler(new Request("http://local/v1/explode"))
      expect(platform.status).toBe(500)
      const text = await platform.text()
      expect(JSON.parse(text)).toEqual({
        error: { type: "api_error", code: "internal_error", message: "Internal server error", request_id: null, param: null },
        status: "failed"
      })
      expect(text).not.toContain("secret internals")
      const flat = await handler(new Request("http://local/api/ai/explode"))
      expect(flat.status).toBe(500)
      expect(await flat.json()).toEqual({ error: "internal_error", message: "Internal server error", request_id: null })
      expect(logged.join("\n")).toContain("request failed")
    } finally {
      await dispose()
    }
  })
})
