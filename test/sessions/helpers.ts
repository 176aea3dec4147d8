/** Helpers of the session tests: a gateway wired to the fake OpenAI upstream, and SSE reading with a standard parser. */
import { createParser, type EventSourceMessage } from "eventsource-parser"
import { startOpenAIFake } from "../fakes/openai.ts"
import type { FakeUpstream } from "../fakes/upstream.ts"
import { type Gateway, startGateway } from "../harness.ts"
import { call, serviceKey } from "../http.ts"

export const MODEL = "gpt-4o-mini"

export interface Env {
  readonly gw: Gateway
  readonly openai: FakeUpstream
  readonly close: () => Promise<void>
}

export const startSessionsEnv = async (env: Record<string, string> = {}, databaseUrl?: string): Promise<Env> => {
  const openai = await startOpenAIFake({ apiKey: "sk-fake" })
  const gw = await startGateway({
    env: { OPENAI_BASE_URL: openai.baseUrl, OPENAI_API_KEY: "sk-fake", UPSTREAM_RETRY_BASE_MS: "10", ...env },
    ...(databaseUrl === undefined ? {} : { databaseUrl })
  })
  return {
    gw,
    openai,
    close: async () => {
      await gw.close()
      await openai.close()
    }
  }
}

export interface SseEvent {
  readonly id: string | undefined
  readonly event: string
  readonly data: any
  /** When it arrived (ms since epoch). */
  readonly at: number
}

/** Reads an SSE body to its end (or until `stopAfter` events, then disconnects). */
export const readSse = async (response: Response, options: { readonly stopAfter?: number } = {}) => {
  const events: Array<SseEvent> = []
  const comments: Array<string> = []
  const parser = createParser({
    onEvent: (message: EventSourceMessage) =>
      events.push({ id: message.id, event: message.event ?? "message", data: JSON.parse(message.data), at: Date.now() }),
    onComment: (comment) => comments.push(comment)
  })
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    parser.feed(decoder.decode(value, { stream: true }))
    if (options.stopAfter !== undefined && events.length >= options.stopAfter) {
      await reader.cancel()
      break
    }
  }
  return { events, comments }
}

export const headers = (gw: Gateway, key = gw.project.apiKey) => ({ ...serviceKey(key), "content-type": "application/json" })

/** Opens an SSE request without reading it. */
export const post = (gw: Gateway, path: string, json: unknown, key = gw.project.apiKey) =>
  fetch(gw.baseUrl + path, { method: "POST", headers: headers(gw, key), body: JSON.stringify(json) })

export const createSession = async (gw: Gateway, body: unknown = {}, key = gw.project.apiKey) => {
  const res = await call(gw.baseUrl, "POST", "/v1/sessions", { headers: serviceKey(key), json: body })
  if (res.status !== 201) throw new Error(`create session: ${res.status} ${res.text}`)
  return res.body as { id: string; status: string; turn_count: number; created_at: string; updated_at: string }
}

/** Runs a turn and reads its whole SSE answer. */
export const turn = async (gw: Gateway, sessionId: string, body: Record<string, unknown>, key = gw.project.apiKey) => {
  const response = await post(gw, `/v1/sessions/${sessionId}/turns`, { model: MODEL, ...body }, key)
  if (response.status !== 200) throw new Error(`turn: ${response.status} ${await response.text()}`)
  return (await readSse(response)).events
}

export const approve = async (gw: Gateway, sessionId: string, body: Record<string, unknown>) => {
  const response = await post(gw, `/v1/sessions/${sessionId}/approve`, body)
  if (response.status !== 200) throw new Error(`approve: ${response.status} ${await response.text()}`)
  return (await readSse(response)).events
}

export const getSession = async (gw: Gateway, sessionId: string) =>
  call(gw.baseUrl, "GET", `/v1/sessions/${sessionId}`, { headers: serviceKey(gw.project.apiKey) })

export const eventLog = async (gw: Gateway, sessionId: string, query = "limit=1000") => {
  const res = await call(gw.baseUrl, "GET", `/v1/sessions/${sessionId}/events?${query}`, {
    headers: serviceKey(gw.project.apiKey)
  })
  if (res.status !== 200) throw new Error(`events: ${res.status} ${res.text}`)
  return res.body as {
    data: Array<{ id: string; session_id: string; turn_number: number; sequence: number; event_type: string; payload: any; created_at: string }>
    pagination: { page: number; limit: number; total: number; total_pages: number }
  }
}

export const names = (events: ReadonlyArray<SseEvent>) => events.map((event) => event.event)

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export const waitUntil = async (check: () => Promise<boolean>, timeoutMs = 10_000, what = "condition") => {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(25)
  }
}
