/**
 * Fake Google Gemini upstream for tests. See `upstream.ts` for the scripting API.
 *
 *   const fake = await startGoogleFake({ apiKey: "g-test" })
 *   env: { GOOGLE_BASE_URL: fake.baseUrl, GOOGLE_API_KEY: "g-test" }        // baseUrl = http://127.0.0.1:N/v1beta
 *   fake.enqueue({ text: ["Hola", " mundo"], usage: { promptTokens: 7, completionTokens: 2 } })
 *   fake.enqueue({ toolCalls: [{ name: "lookup", arguments: { q: "x" } }] })
 *   fake.enqueue({ status: 429, retryAfter: 2 })     // RESOURCE_EXHAUSTED with RetryInfo.retryDelay "2s"
 *
 * Wire: `POST /v1beta/models/{model}:generateContent` and `:streamGenerateContent?alt=sse` with `x-goog-api-key`
 * (or `?key=`). Bodies with `inline_data`/`inlineData` (and `mime_type`/`mimeType`) are both understood. The
 * stream sends `data: <GenerateContentResponse>` events with CRLF line ends and no [DONE]; the last event carries
 * `finishReason` and the full `usageMetadata`. Errors: `{"error":{"code","message","status","details"?}}`; a
 * `retryAfter` becomes a `google.rpc.RetryInfo` detail (Google sends no Retry-After header). `GET /v1beta/models`
 * lists `{models:[{name:"models/<id>", displayName, supportedGenerationMethods}]}`.
 */
import {
  argumentsObject,
  fakeId,
  type FakeOptions,
  type FakeUpstream,
  finishOf,
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

const STATUS_NAMES: Readonly<Record<number, string>> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  429: "RESOURCE_EXHAUSTED",
  500: "INTERNAL",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED"
}

const FINISH_REASONS = { stop: "STOP", length: "MAX_TOKENS", tool_calls: "STOP", content_filter: "SAFETY" } as const

/** `/v1beta/models/gemini-2.0-flash:generateContent?…` → `{model, method}` */
const parseChatPath = (path: string): { model: string; method: string } | undefined => {
  const match = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent)$/.exec(path.split("?")[0]!)
  return match ? { model: decodeURIComponent(match[1]!), method: match[2]! } : undefined
}

const usageBody = (reply: ScriptedReply) => {
  const usage = usageOf(reply)
  return {
    promptTokenCount: usage.promptTokens,
    candidatesTokenCount: usage.completionTokens,
    totalTokenCount: usage.promptTokens + usage.completionTokens,
    ...(usage.cachedTokens > 0 ? { cachedContentTokenCount: usage.cachedTokens } : {})
  }
}

const functionCallParts = (reply: ScriptedReply) =>
  (reply.toolCalls ?? []).map((call) => ({
    functionCall: { name: call.name, args: argumentsObject(call), ...(call.id !== undefined ? { id: call.id } : {}) }
  }))

const candidate = (parts: ReadonlyArray<unknown>, finishReason?: string) => ({
  content: { role: "model", parts },
  index: 0,
  ...(finishReason !== undefined ? { finishReason } : {})
})

export const googleWire = (options: FakeOptions): WireFormat => ({
  family: "google",
  basePath: "/v1beta",
  isChat: (r) => r.method === "POST" && parseChatPath(r.path) !== undefined,
  isStreaming: (r) => parseChatPath(r.path)?.method === "streamGenerateContent",
  route: (r, res) => {
    if (r.method === "GET" && r.path.split("?")[0] === "/v1beta/models") {
      const models = options.models ?? ["gemini-2.0-flash", "gemini-2.5-pro"]
      sendJson(res, 200, {
        models: models.map((id) => ({
          name: `models/${id}`,
          displayName: id,
          supportedGenerationMethods: ["generateContent", "streamGenerateContent"]
        }))
      })
      return true
    }
    return false
  },
  reject: (r, apiKey) => {
    if (apiKey === undefined) return undefined
    const queryKey = new URL(r.path, "http://fake").searchParams.get("key")
    return r.headers["x-goog-api-key"] === apiKey || queryKey === apiKey
      ? undefined
      : { status: 400, message: "API key not valid. Please pass a valid API key." }
  },
  lastUserInput: (r) => {
    const contents = isRecord(r.body) && Array.isArray(r.body.contents) ? r.body.contents : []
    const last = [...contents].reverse().find((c) => isRecord(c) && (c.role === "user" || c.role === undefined))
    const parts = isRecord(last) && Array.isArray(last.parts) ? last.parts.filter(isRecord) : []
    return {
      text: parts.filter((p) => typeof p.text === "string").map((p) => String(p.text)).join(" "),
      images: parts.filter((p) => isRecord(p.inline_data) || isRecord(p.inlineData) || isRecord(p.fileData) || isRecord(p.file_data)).length
    }
  },
  errorBody: (status, reply) => ({
    error: {
      code: status,
      message: reply.error?.message ?? `fake ${STATUS_NAMES[status] ?? "error"}`,
      status: reply.error?.type ?? STATUS_NAMES[status] ?? (status >= 500 ? "INTERNAL" : "INVALID_ARGUMENT"),
      ...(reply.retryAfter !== undefined
        ? { details: [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: `${reply.retryAfter}s` }] }
        : {})
    }
  }),
  errorHeaders: () => ({}),
  completion: (reply, request) => {
    const text = textOf(reply)
    return {
      candidates: [
        candidate([...(text !== "" ? [{ text }] : []), ...functionCallParts(reply)], FINISH_REASONS[finishOf(reply)])
      ],
      usageMetadata: usageBody(reply),
      modelVersion: reply.model ?? parseChatPath(request.path)?.model ?? "gemini-2.0-flash",
      responseId: fakeId("resp_")
    }
  },
  streamEvents: (reply, request) => {
    const modelVersion = reply.model ?? parseChatPath(request.path)?.model ?? "gemini-2.0-flash"
    const responseId = fakeId("resp_")
    const usage = usageBody(reply)
    // Gemini ends lines with CRLF.
    const event = (body: Record<string, unknown>) => sse({ ...body, modelVersion, responseId }, undefined, "\r\n")
    const events = textChunks(reply).map((text) =>
      event({ candidates: [candidate([{ text }])], usageMetadata: { promptTokenCount: usage.promptTokenCount } })
    )
    if (reply.streamError) {
      const status = reply.streamError.type ?? "INTERNAL"
      events.push(sse({ error: { code: 500, message: reply.streamError.message ?? "Internal error", status } }, undefined, "\r\n"))
      return events
    }
    const calls = functionCallParts(reply)
    events.push(event({ candidates: [candidate(calls, FINISH_REASONS[finishOf(reply)])], usageMetadata: usage }))
    return events
  }
})

/** Starts a fake Gemini upstream on 127.0.0.1 (ephemeral port). */
export const startGoogleFake = (options: FakeOptions = {}): Promise<FakeUpstream> => startFake(googleWire(options), options)
