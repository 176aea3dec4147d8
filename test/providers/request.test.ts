/** The chat-completions body we accept, and Retry-After parsing. */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Schema } from "effect"
import { parseRetryAfter } from "../../layers/providers/http.ts"
import { ChatRequest, decodeChatRequest, UpstreamError } from "../../layers/providers/types.ts"

describe("ChatRequest schema", () => {
  it.effect("accepts what the openai SDK sends: nulls, unknown fields, every message role and part", () =>
    Effect.gen(function*() {
      const decoded = yield* decodeChatRequest({
        model: "gpt-4o",
        messages: [
          { role: "system", content: "sys" },
          { role: "developer", content: [{ type: "text", text: "dev" }] },
          { role: "user", content: [{ type: "text", text: "hi" }, { type: "image_url", image_url: { url: "https://x/y.png", detail: "low" } }], name: "ann" },
          { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }], refusal: null },
          { role: "tool", tool_call_id: "c1", content: "result" }
        ],
        tools: [{ type: "function", function: { name: "f", parameters: { type: "object" } } }],
        tool_choice: "auto",
        temperature: null,
        max_tokens: 10,
        stream: true,
        stream_options: { include_usage: true },
        logit_bias: { "50256": -100 },
        some_future_field: { nested: true }
      })
      expect(decoded.messages).toHaveLength(5)
      expect(decoded.temperature).toBeNull()
      expect("some_future_field" in decoded).toBe(false)
    }))

  it("rejects a message with an unknown role or a malformed tool call", () => {
    const decode = Schema.decodeUnknownEither(ChatRequest)
    expect(Either.isLeft(decode({ model: "m", messages: [{ role: "robot", content: "x" }] }))).toBe(true)
    expect(Either.isLeft(decode({ model: "m", messages: [{ role: "assistant", tool_calls: [{ id: "c" }] }] }))).toBe(true)
    expect(Either.isLeft(decode({ messages: [] }))).toBe(true)
  })
})

describe("UpstreamError", () => {
  it("is retryable for 429, 5xx, timeouts and network failures only", () => {
    const http = (status: number) => new UpstreamError({ kind: "http", family: "openai", status, message: "m" }).retryable
    expect([400, 401, 403, 404, 413, 422].map(http)).toEqual([false, false, false, false, false, false])
    expect([429, 500, 502, 503, 529].map(http)).toEqual([true, true, true, true, true])
    expect(new UpstreamError({ kind: "timeout", family: "google", message: "m" }).retryable).toBe(true)
    expect(new UpstreamError({ kind: "network", family: "google", message: "m" }).retryable).toBe(true)
    expect(new UpstreamError({ kind: "decode", family: "google", message: "m" }).retryable).toBe(false)
    expect(new UpstreamError({ kind: "request", family: "google", status: 400, message: "m" }).retryable).toBe(false)
  })
})

describe("Retry-After", () => {
  const now = Date.parse("2026-01-01T00:00:00Z")
  it("reads seconds, retry-after-ms first, and HTTP dates relative to now", () => {
    expect(parseRetryAfter({ "retry-after": "3" }, now)).toBe(3000)
    expect(parseRetryAfter({ "retry-after": "3", "retry-after-ms": "1250" }, now)).toBe(1250)
    expect(parseRetryAfter({ "retry-after": "Thu, 01 Jan 2026 00:00:10 GMT" }, now)).toBe(10_000)
    expect(parseRetryAfter({ "retry-after": "Wed, 31 Dec 2025 00:00:10 GMT" }, now)).toBe(0)
    expect(parseRetryAfter({ "retry-after": "soon" }, now)).toBeUndefined()
    expect(parseRetryAfter({}, now)).toBeUndefined()
  })
})
