/**
 * Fake OpenAI (and OpenAI-compatible) upstream for tests. See `upstream.ts` for the scripting API.
 *
 *   const fake = await startOpenAIFake({ apiKey: "sk-test", models: ["gpt-4o-mini"] })
 *   env: { OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "sk-test" }      // baseUrl = http://127.0.0.1:N/v1
 *   fake.enqueue({ text: ["Hi", " there"], usage: { promptTokens: 9, completionTokens: 2, cachedTokens: 4 } })
 *   fake.enqueue({ toolCalls: [{ name: "get_weather", arguments: { city: "Paris" } }] })
 *   fake.enqueue({ status: 429, retryAfter: 3 })                            // rate limited, Retry-After: 3
 *   fake.enqueue({ hang: true })                                             // never answers
 *
 * Wire: `POST …/chat/completions` (any path prefix, so custom providers with other base URLs work) with
 * `Authorization: Bearer <key>`; `stream: true` answers `data: {chunk}` events ending with `data: [DONE]`, and a
 * usage chunk with `choices: []` before it when `stream_options.include_usage` is set. Errors:
 * `{"error":{"message","type","param","code"}}`. `GET …/models` lists `{object:"list", data:[{id, object:"model",
 * created, owned_by}]}`. Images in user messages are accepted (the default reply echoes the text and counts them).
 */
import {
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

const ERROR_DEFAULTS: Readonly<Record<number, { type: string; code: string | null; message: string }>> = {
  400: { type: "invalid_request_error", code: null, message: "Invalid request." },
  401: { type: "invalid_request_error", code: "invalid_api_key", message: "Incorrect API key provided." },
  403: { type: "invalid_request_error", code: "unsupported_country_region_territory", message: "Forbidden." },
  404: { type: "invalid_request_error", code: "model_not_found", message: "The model does not exist." },
  429: { type: "requests", code: "rate_limit_exceeded", message: "Rate limit reached for requests." },
  500: { type: "server_error", code: null, message: "The server had an error while processing your request." },
  503: { type: "server_error", code: null, message: "The engine is currently overloaded." }
}

const requestedModel = (request: CapturedRequest): string =>
  isRecord(request.body) && typeof request.body.model === "string" ? request.body.model : "gpt-4o-mini"

const usageBody = (reply: ScriptedReply) => {
  const usage = usageOf(reply)
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedTokens }
  }
}

const toolCallsOf = (reply: ScriptedReply) =>
  (reply.toolCalls ?? []).map((call) => ({ id: call.id ?? fakeId("call_"), name: call.name, arguments: argumentsText(call) }))

export const openAIWire = (options: FakeOptions): WireFormat => ({
  family: "openai",
  basePath: "/v1",
  isChat: (r) => r.method === "POST" && r.path.split("?")[0]!.endsWith("/chat/completions"),
  isStreaming: (r) => isRecord(r.body) && r.body.stream === true,
  route: (r, res) => {
    if (r.method === "GET" && r.path.split("?")[0]!.endsWith("/models")) {
      const models = options.models ?? ["gpt-4o-mini", "gpt-4o"]
      sendJson(res, 200, {
        object: "list",
        data: models.map((id) => ({ id, object: "model", created: 1_700_000_000, owned_by: "openai" }))
      })
      return true
    }
    return false
  },
  reject: (r, apiKey) =>
    apiKey !== undefined && r.headers.authorization !== `Bearer ${apiKey}`
      ? { status: 401, message: "Incorrect API key provided." }
      : undefined,
  lastUserInput: (r) => {
    const messages = isRecord(r.body) && Array.isArray(r.body.messages) ? r.body.messages : []
    const last = [...messages].reverse().find((m) => isRecord(m) && m.role === "user")
    if (!isRecord(last)) return { text: "", images: 0 }
    if (typeof last.content === "string") return { text: last.content, images: 0 }
    const parts = Array.isArray(last.content) ? last.content.filter(isRecord) : []
    return {
      text: parts.filter((p) => p.type === "text").map((p) => String(p.text)).join(" "),
      images: parts.filter((p) => p.type === "image_url").length
    }
  },
  errorBody: (status, reply) => {
    const defaults = ERROR_DEFAULTS[status] ?? ERROR_DEFAULTS[status >= 500 ? 500 : 400]!
    return {
      error: {
        message: reply.error?.message ?? defaults.message,
        type: reply.error?.type ?? defaults.type,
        param: null,
        code: reply.error?.code ?? defaults.code
      }
    }
  },
  errorHeaders: (reply) => (reply.retryAfter !== undefined ? { "retry-after": String(reply.retryAfter) } : {}),
  completion: (reply, request) => {
    const calls = toolCallsOf(reply)
    const text = textOf(reply)
    return {
      id: fakeId("chatcmpl-"),
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model: reply.model ?? requestedModel(request),
      choices: [{
        index: 0,
        message: {
          role: "assistant",
          content: text === "" && calls.length > 0 ? null : text,
          refusal: null,
          ...(calls.length > 0
            ? { tool_calls: calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } })) }
            : {})
        },
        logprobs: null,
        finish_reason: finishOf(reply)
      }],
      usage: usageBody(reply)
    }
  },
  streamEvents: (reply, request) => {
    const id = fakeId("chatcmpl-")
    const created = Math.floor(Date.now() / 1000)
    const model = reply.model ?? requestedModel(request)
    const chunk = (choices: ReadonlyArray<unknown>, extra: Record<string, unknown> = {}) =>
      sse({ id, object: "chat.completion.chunk", created, model, choices, ...extra })
    const delta = (d: Record<string, unknown>, finish: string | null = null) =>
      chunk([{ index: 0, delta: d, logprobs: null, finish_reason: finish }])
    const events = [delta({ role: "assistant", content: "", refusal: null })]
    for (const text of textChunks(reply)) events.push(delta({ content: text }))
    if (reply.streamError) {
      events.push(sse({ error: { message: reply.streamError.message ?? "The server had an error.", type: reply.streamError.type ?? "server_error", param: null, code: reply.streamError.code ?? null } }))
      return events
    }
    toolCallsOf(reply).forEach((call, index) => {
      events.push(delta({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] }))
      for (const piece of halves(call.arguments)) {
        events.push(delta({ tool_calls: [{ index, function: { arguments: piece } }] }))
      }
    })
    events.push(delta({}, finishOf(reply)))
    const body = request.body
    const includeUsage = isRecord(body) && isRecord(body.stream_options) && body.stream_options.include_usage === true
    if (includeUsage) events.push(chunk([], { usage: usageBody(reply) }))
    events.push(sse("[DONE]"))
    return events
  }
})

/** Starts a fake OpenAI upstream on 127.0.0.1 (ephemeral port). */
export const startOpenAIFake = (options: FakeOptions = {}): Promise<FakeUpstream> => startFake(openAIWire(options), options)
