/**
 * Shared machinery of the fake upstream servers (`openai.ts`, `anthropic.ts`, `google.ts`): a real node:http
 * server on 127.0.0.1 (ephemeral port) that answers chat calls from a queue of scripted replies, captures every
 * request, counts TCP connections and notices clients that hang up before the answer ended.
 *
 *   const fake = await startOpenAIFake()              // or startAnthropicFake / startGoogleFake
 *   fake.enqueue({ text: ["Hel", "lo"], usage: { promptTokens: 12, completionTokens: 2 } })
 *   // point the code under test at fake.baseUrl (e.g. env OPENAI_BASE_URL), call it, then:
 *   fake.lastRequest()?.body                          // the JSON body the client sent
 *   await fake.close()
 *
 * With an empty queue a chat call gets the default reply: it echoes the last user text (`echo: <text>`, plus
 * ` [N image(s)]` when the message had images). `fake.setDefault(...)` changes that.
 *
 * Scripted usage is in normalised terms (`promptTokens` includes `cachedTokens`); each fake writes it the way its
 * provider does (Anthropic's `input_tokens` excludes cache reads, for instance).
 */
import * as Http from "node:http"
import type { AddressInfo } from "node:net"

export type Family = "openai" | "anthropic" | "google"

export interface ScriptedToolCall {
  /** Defaults to a fresh `call_…` / `toolu_…` id (Gemini sends none unless set). */
  readonly id?: string
  readonly name: string
  /** An object is sent as its JSON text (OpenAI) or as the object (Anthropic input, Gemini args). */
  readonly arguments: string | Readonly<Record<string, unknown>>
}

export interface ScriptedUsage {
  readonly promptTokens?: number
  readonly completionTokens?: number
  readonly cachedTokens?: number
}

export interface ScriptedReply {
  /** Answer text. An array is streamed one element per event (joined when not streaming). */
  readonly text?: string | ReadonlyArray<string>
  readonly toolCalls?: ReadonlyArray<ScriptedToolCall>
  /** Defaults: promptTokens 10, completionTokens = words of the text (at least 1), cachedTokens 0. */
  readonly usage?: ScriptedUsage
  /** Defaults to `tool_calls` when there are tool calls, else `stop`. Written in the provider's terms. */
  readonly finishReason?: "stop" | "length" | "tool_calls" | "content_filter"
  /** The model the answer names (defaults to the requested one). */
  readonly model?: string
  /** Wait before sending the response headers. */
  readonly delayMs?: number
  /** Wait between stream events. */
  readonly chunkDelayMs?: number
  /** Answer with this error status and the provider's error body. */
  readonly status?: number
  /** Error body details (defaults per status in the provider's vocabulary). */
  readonly error?: { readonly message?: string; readonly type?: string; readonly code?: string }
  /** Retry-After value in seconds (Gemini: a RetryInfo `retryDelay` in the body instead of the header). */
  readonly retryAfter?: number
  /** Extra response headers. */
  readonly headers?: Readonly<Record<string, string>>
  /** Never answer: the request stays open until the client gives up. */
  readonly hang?: boolean
  /** Streaming: after this many SSE events, send nothing more but keep the connection open. */
  readonly stallAfterEvents?: number
  /** Streaming: after this many SSE events, destroy the connection (a truncated stream). */
  readonly cutAfterEvents?: number
  /** Streaming: after the text, send the provider's in-stream error event and end. */
  readonly streamError?: { readonly message?: string; readonly type?: string; readonly code?: string }
  /** Answer 200 with exactly this JSON body (non-streaming). */
  readonly rawBody?: unknown
}

export interface CapturedRequest {
  readonly method: string
  /** Path with query string, e.g. `/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse`. */
  readonly path: string
  /** Lower-cased header names. */
  readonly headers: Readonly<Record<string, string>>
  /** Parsed JSON body (undefined when empty or not JSON). */
  readonly body: unknown
  readonly rawBody: string
  /** Whether the request was a streaming one (by the provider's own rule). */
  readonly streaming: boolean
  /** Set when the client closed the connection before the answer was complete. */
  readonly aborted: boolean
}

export interface FakeUpstream {
  readonly family: Family
  /** `http://127.0.0.1:<port>` */
  readonly origin: string
  /** What goes in a target's `baseUrl` / `<PROVIDER>_BASE_URL`: origin + `/v1` (Gemini: `/v1beta`). */
  readonly baseUrl: string
  /** Every request received, oldest first (model listings included). */
  readonly requests: ReadonlyArray<CapturedRequest>
  /** Chat calls only. */
  readonly chatRequests: ReadonlyArray<CapturedRequest>
  readonly requestCount: number
  /** TCP connections accepted so far (stays 1 over several calls when the client keeps connections alive). */
  readonly connectionCount: number
  /** Chat calls whose client hung up before the answer ended. */
  readonly abortCount: number
  /** Queue replies for the next chat calls, in order. */
  enqueue(...replies: ReadonlyArray<ScriptedReply>): void
  /** The reply when the queue is empty (a function sees the captured request). */
  setDefault(reply: ScriptedReply | ((request: CapturedRequest) => ScriptedReply)): void
  lastRequest(): CapturedRequest | undefined
  /** Resolves once `count` chat calls have arrived. */
  waitForRequests(count: number, timeoutMs?: number): Promise<void>
  /** Resolves with the first chat call whose client hung up early. */
  waitForAbort(timeoutMs?: number): Promise<CapturedRequest>
  /** Clears the queue, captured requests and counters (connections stay open). */
  reset(): void
  close(): Promise<void>
}

/** What a provider's fake supplies to the shared server. */
export interface WireFormat {
  readonly family: Family
  /** The path prefix of the provider's API version, e.g. `/v1`. */
  readonly basePath: string
  /** Answers a non-chat route (model listings); returns false when the route is unknown. */
  route(request: CapturedRequest, res: Http.ServerResponse): boolean
  isChat(request: CapturedRequest): boolean
  isStreaming(request: CapturedRequest): boolean
  /** Why the request is refused before any scripting (missing auth or version header), else undefined. */
  reject(request: CapturedRequest, apiKey: string | undefined): { status: number; message: string } | undefined
  /** Text and image count of the last user message, for the echo reply. */
  lastUserInput(request: CapturedRequest): { text: string; images: number }
  errorBody(status: number, reply: ScriptedReply): unknown
  errorHeaders(reply: ScriptedReply): Record<string, string>
  completion(reply: ScriptedReply, request: CapturedRequest): unknown
  /**
   * The SSE events of a streamed answer, already framed (`event:`/`data:` lines and the blank line). With
   * `streamError`, the text events are followed by the provider's error event instead of the ending.
   */
  streamEvents(reply: ScriptedReply, request: CapturedRequest): ReadonlyArray<string>
}

export interface FakeOptions {
  /** When set, calls without this key (in the provider's auth header) get the provider's 401. */
  readonly apiKey?: string
  /** Model ids served by the model listing. */
  readonly models?: ReadonlyArray<string>
}

// ---------------------------------------------------------------------------------------------------------------
// Helpers for the wire formats
// ---------------------------------------------------------------------------------------------------------------

export const textOf = (reply: ScriptedReply): string =>
  reply.text === undefined ? "" : typeof reply.text === "string" ? reply.text : reply.text.join("")

export const textChunks = (reply: ScriptedReply): ReadonlyArray<string> =>
  reply.text === undefined ? [] : typeof reply.text === "string" ? (reply.text === "" ? [] : [reply.text]) : reply.text

export const usageOf = (reply: ScriptedReply): Required<ScriptedUsage> => {
  const words = textOf(reply).split(/\s+/).filter((w) => w.length > 0).length
  return {
    promptTokens: reply.usage?.promptTokens ?? 10,
    completionTokens: reply.usage?.completionTokens ?? Math.max(1, words),
    cachedTokens: reply.usage?.cachedTokens ?? 0
  }
}

export const finishOf = (reply: ScriptedReply): NonNullable<ScriptedReply["finishReason"]> =>
  reply.finishReason ?? ((reply.toolCalls?.length ?? 0) > 0 ? "tool_calls" : "stop")

export const argumentsText = (call: ScriptedToolCall): string =>
  typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments)

export const argumentsObject = (call: ScriptedToolCall): unknown => {
  if (typeof call.arguments !== "string") return call.arguments
  try {
    return JSON.parse(call.arguments)
  } catch {
    return {}
  }
}

/** Splits a string in two pieces (so clients must concatenate partial JSON). */
export const halves = (text: string): ReadonlyArray<string> => {
  if (text.length < 2) return [text]
  const mid = Math.floor(text.length / 2)
  return [text.slice(0, mid), text.slice(mid)]
}

let counter = 0
export const fakeId = (prefix: string): string => `${prefix}${Date.now().toString(36)}${(++counter).toString(36)}`

export const sse = (data: unknown, event?: string, lineEnd = "\n"): string =>
  (event !== undefined ? `event: ${event}${lineEnd}` : "") +
  `data: ${typeof data === "string" ? data : JSON.stringify(data)}${lineEnd}${lineEnd}`

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

export const sendJson = (res: Http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  const text = JSON.stringify(body)
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers })
  res.end(text)
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

const waitUntil = async (check: () => boolean, timeoutMs: number, what: string) => {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`fake upstream: timed out waiting for ${what}`)
    await sleep(5)
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The server
// ---------------------------------------------------------------------------------------------------------------

interface MutableCapture extends CapturedRequest {
  aborted: boolean
}

export const startFake = async (wire: WireFormat, options: FakeOptions = {}): Promise<FakeUpstream> => {
  const queue: Array<ScriptedReply> = []
  const requests: Array<MutableCapture> = []
  let connectionCount = 0
  let defaultReply: ScriptedReply | ((request: CapturedRequest) => ScriptedReply) = (request) => {
    const input = wire.lastUserInput(request)
    const images = input.images > 0 ? ` [${input.images} image${input.images === 1 ? "" : "s"}]` : ""
    return { text: `echo: ${input.text}${images}` }
  }

  const answer = async (capture: MutableCapture, res: Http.ServerResponse) => {
    const refusal = wire.reject(capture, options.apiKey)
    if (refusal) {
      sendJson(res, refusal.status, wire.errorBody(refusal.status, { error: { message: refusal.message } }))
      return
    }
    const reply = queue.shift() ?? (typeof defaultReply === "function" ? defaultReply(capture) : defaultReply)
    if (reply.hang) return
    if (reply.delayMs) await sleep(reply.delayMs)
    if (res.destroyed) return
    const headers = { "x-request-id": fakeId("req_"), ...reply.headers }
    if (reply.status !== undefined && reply.status >= 400) {
      sendJson(res, reply.status, wire.errorBody(reply.status, reply), { ...headers, ...wire.errorHeaders(reply) })
      return
    }
    if (reply.rawBody !== undefined) {
      sendJson(res, reply.status ?? 200, reply.rawBody, headers)
      return
    }
    if (!capture.streaming) {
      sendJson(res, 200, wire.completion(reply, capture), headers)
      return
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", ...headers })
    const events = wire.streamEvents(reply, capture)
    for (let i = 0; i < events.length; i++) {
      if (res.destroyed) return
      if (reply.stallAfterEvents !== undefined && i >= reply.stallAfterEvents) return
      if (reply.cutAfterEvents !== undefined && i >= reply.cutAfterEvents) {
        res.socket?.destroy()
        return
      }
      res.write(events[i])
      if (reply.chunkDelayMs && i < events.length - 1) await sleep(reply.chunkDelayMs)
    }
    res.end()
  }

  const server = Http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const rawBody = Buffer.concat(chunks).toString("utf8")
      let body: unknown
      try {
        body = rawBody.length > 0 ? JSON.parse(rawBody) : undefined
      } catch {
        body = undefined
      }
      const headers: Record<string, string> = {}
      for (const [name, value] of Object.entries(req.headers)) {
        if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value
      }
      const partial = { method: req.method ?? "GET", path: req.url ?? "/", headers, body, rawBody, aborted: false }
      const capture: MutableCapture = { ...partial, streaming: wire.isStreaming({ ...partial, streaming: false }) }
      requests.push(capture)
      if (!wire.isChat(capture)) {
        if (!wire.route(capture, res)) sendJson(res, 404, wire.errorBody(404, { error: { message: `no route ${capture.path}` } }))
        return
      }
      res.on("close", () => {
        if (!res.writableFinished) capture.aborted = true
      })
      answer(capture, res).catch(() => res.destroy())
    })
  })
  server.on("connection", () => {
    connectionCount++
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const chat = () => requests.filter((r) => wire.isChat(r))

  return {
    family: wire.family,
    origin,
    baseUrl: origin + wire.basePath,
    get requests() {
      return requests
    },
    get chatRequests() {
      return chat()
    },
    get requestCount() {
      return requests.length
    },
    get connectionCount() {
      return connectionCount
    },
    get abortCount() {
      return chat().filter((r) => r.aborted).length
    },
    enqueue: (...replies) => {
      queue.push(...replies)
    },
    setDefault: (reply) => {
      defaultReply = reply
    },
    lastRequest: () => requests[requests.length - 1],
    waitForRequests: (count, timeoutMs = 5000) => waitUntil(() => chat().length >= count, timeoutMs, `${count} requests`),
    waitForAbort: async (timeoutMs = 5000) => {
      await waitUntil(() => chat().some((r) => r.aborted), timeoutMs, "a client abort")
      return chat().find((r) => r.aborted)!
    },
    reset: () => {
      queue.length = 0
      requests.length = 0
      connectionCount = 0
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
