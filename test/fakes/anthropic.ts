/**
 * Fake Anthropic Messages upstream for tests. See `upstream.ts` for the scripting API.
 *
 *   const fake = await startAnthropicFake({ apiKey: "sk-ant-test" })
 *   env: { ANTHROPIC_BASE_URL: fake.baseUrl, ANTHROPIC_API_KEY: "sk-ant-test" }   // baseUrl = http://127.0.0.1:N/v1
 *   fake.enqueue({ text: ["Bon", "jour"], usage: { promptTokens: 30, completionTokens: 2, cachedTokens: 20 } })
 *   fake.enqueue({ text: "Let me check.", toolCalls: [{ name: "lookup", arguments: { q: "x" } }] })
 *   fake.enqueue({ status: 529, error: { type: "overloaded_error" } })
 *   fake.enqueue({ text: ["partial"], streamError: { type: "overloaded_error", message: "Overloaded" } })
 *
 * Wire: `POST /v1/messages` with `x-api-key` and `anthropic-version` (missing version → 400, as the real API);
 * `stream: true` answers `event:` + `data:` lines: message_start, content_block_start, ping, content_block_delta
 * (text_delta / input_json_delta), content_block_stop, message_delta (stop_reason, usage.output_tokens),
 * message_stop; `streamError` sends an `error` event after the text. Errors: `{"type":"error","error":{"type",
 * "message"},"request_id"}`. Usage: `input_tokens` = promptTokens − cachedTokens, `cache_read_input_tokens` =
 * cachedTokens. `GET /v1/models` lists `{data:[{type:"model", id, display_name, created_at}], has_more, …}`.
 */
import {
  argumentsObject,
  argumentsText,
  type CapturedRequest,
  fakeId,
  type FakeOptions,
  type FakeUpstream,
  finishOf,
  halves,
  isRecord,
  type ScriptedReply,
  sendJson,
  sse,
  startFake,
  textChunks,
  textOf,
  usageOf,
  type WireFormat
} from "./upstream.ts"

const ERROR_TYPES: Readonly<Record<number, string>> = {
  400: "invalid_request_error",
  401: "authentication_error",
  402: "billing_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  504: "timeout_error",
  529: "overloaded_error"
}

const STOP_REASONS = { stop: "end_turn", length: "max_tokens", tool_calls: "tool_use", content_filter: "refusal" } as const

const requestedModel = (request: CapturedRequest): string =>
  isRecord(request.body) && typeof request.body.model === "string" ? request.body.model : "claude-sonnet-4-5"

const usageBody = (reply: ScriptedReply) => {
  const usage = usageOf(reply)
  return {
    input_tokens: usage.promptTokens - usage.cachedTokens,
    output_tokens: usage.completionTokens,
    cache_read_input_tokens: usage.cachedTokens,
    cache_creation_input_tokens: 0
  }
}

const toolUses = (reply: ScriptedReply) =>
  (reply.toolCalls ?? []).map((call) => ({
    id: call.id ?? fakeId("toolu_"),
    name: call.name,
    input: argumentsObject(call),
    json: argumentsText(call)
  }))

export const anthropicWire = (options: FakeOptions): WireFormat => ({
  family: "anthropic",
  basePath: "/v1",
  isChat: (r) => r.method === "POST" && r.path.split("?")[0] === "/v1/messages",
  isStreaming: (r) => isRecord(r.body) && r.body.stream === true,
  route: (r, res) => {
    if (r.method === "GET" && r.path.split("?")[0] === "/v1/models") {
      const models = options.models ?? ["claude-sonnet-4-5", "claude-haiku-4-5"]
      sendJson(res, 200, {
        data: models.map((id) => ({ type: "model", id, display_name: id, created_at: "2025-01-01T00:00:00Z" })),
        has_more: false,
        first_id: models[0] ?? null,
        last_id: models[models.length - 1] ?? null
      })
      return true
    }
    return false
  },
  reject: (r, apiKey) => {
    if (apiKey !== undefined && r.headers["x-api-key"] !== apiKey) return { status: 401, message: "invalid x-api-key" }
    if (r.headers["anthropic-version"] === undefined) {
      return { status: 400, message: "anthropic-version: header is required" }
    }
    return undefined
  },
  lastUserInput: (r) => {
    const messages = isRecord(r.body) && Array.isArray(r.body.messages) ? r.body.messages : []
    const last = [...messages].reverse().find((m) => isRecord(m) && m.role === "user")
    if (!isRecord(last)) return { text: "", images: 0 }
    if (typeof last.content === "string") return { text: last.content, images: 0 }
    const blocks = Array.isArray(last.content) ? last.content.filter(isRecord) : []
    return {
      text: blocks.filter((b) => b.type === "text").map((b) => String(b.text)).join(" "),
      images: blocks.filter((b) => b.type === "image").length
    }
  },
  errorBody: (status, reply) => {
    const type = reply.error?.type ?? ERROR_TYPES[status] ?? (status >= 500 ? "api_error" : "invalid_request_error")
    return {
      type: "error",
      error: { type, message: reply.error?.message ?? `${type} (fake)` },
      request_id: fakeId("req_")
    }
  },
  errorHeaders: (reply) => (reply.retryAfter !== undefined ? { "retry-after": String(reply.retryAfter) } : {}),
  completion: (reply, request) => {
    const text = textOf(reply)
    return {
      id: fakeId("msg_"),
      type: "message",
      role: "assistant",
      model: reply.model ?? requestedModel(request),
      content: [
        ...(text !== "" ? [{ type: "text", text }] : []),
        ...toolUses(reply).map((t) => ({ type: "tool_use", id: t.id, name: t.name, input: t.input }))
      ],
      stop_reason: STOP_REASONS[finishOf(reply)],
      stop_sequence: null,
      usage: usageBody(reply)
    }
  },
  streamEvents: (reply, request) => {
    const usage = usageBody(reply)
    const event = (type: string, data: Record<string, unknown>) => sse({ type, ...data }, type)
    const events = [
      event("message_start", {
        message: {
          id: fakeId("msg_"),
          type: "message",
          role: "assistant",
          content: [],
          model: reply.model ?? requestedModel(request),
          stop_reason: null,
          stop_sequence: null,
          usage: { ...usage, output_tokens: 1 }
        }
      })
    ]
    let index = 0
    const chunks = textChunks(reply)
    if (chunks.length > 0) {
      events.push(event("content_block_start", { index, content_block: { type: "text", text: "" } }))
      events.push(event("ping", {}))
      for (const text of chunks) events.push(event("content_block_delta", { index, delta: { type: "text_delta", text } }))
    }
    if (reply.streamError) {
      const error = { type: reply.streamError.type ?? "overloaded_error", message: reply.streamError.message ?? "Overloaded" }
      events.push(sse({ type: "error", error }, "error"))
      return events
    }
    if (chunks.length > 0) {
      events.push(event("content_block_stop", { index }))
      index++
    }
    for (const tool of toolUses(reply)) {
      events.push(event("content_block_start", { index, content_block: { type: "tool_use", id: tool.id, name: tool.name, input: {} } }))
      for (const piece of halves(tool.json)) {
        events.push(event("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: piece } }))
      }
      events.push(event("content_block_stop", { index }))
      index++
    }
    events.push(event("message_delta", {
      delta: { stop_reason: STOP_REASONS[finishOf(reply)], stop_sequence: null },
      usage: { output_tokens: usage.output_tokens }
    }))
    events.push(event("message_stop", {}))
    return events
  }
})

/** Starts a fake Anthropic upstream on 127.0.0.1 (ephemeral port). */
export const startAnthropicFake = (options: FakeOptions = {}): Promise<FakeUpstream> =>
  startFake(anthropicWire(options), options)
