/**
 * One delivery attempt on the wire: a POST of the signed body to the checked address (the socket connects to
 * `target.address`; the URL's host still names the server for `Host` and TLS). Redirects are not followed. The
 * attempt ends at the first 1,024 bytes of the answer or the end of the body, whichever comes first, and must
 * finish within the attempt timeout.
 */
import { Duration, Effect, Option } from "effect"
import * as Http from "node:http"
import * as Https from "node:https"
import type { LookupFunction } from "node:net"
import type { ResolvedTarget } from "./Target.ts"

/** Longest answer body kept in the delivery log. */
export const RESPONSE_SNIPPET_BYTES = 1024

export interface WireResult {
  /** Null when no answer came. */
  readonly statusCode: number | null
  /** Null when nothing was sent. */
  readonly latencyMs: number | null
  /** Why no answer came (timeout, refused, reset...). */
  readonly error: string | null
  readonly snippet: string | null
  readonly retryAfter: string | null
}

export interface Agents {
  readonly http: Http.Agent
  readonly https: Https.Agent
}

export const makeAgents = (): Agents => ({
  http: new Http.Agent({ keepAlive: true, maxSockets: 64 }),
  https: new Https.Agent({ keepAlive: true, maxSockets: 64 })
})

export const destroyAgents = (agents: Agents) => {
  agents.http.destroy()
  agents.https.destroy()
}

/** A `lookup` that answers the already-checked address, whatever the resolver would say now. */
const pinnedLookup = (target: ResolvedTarget): LookupFunction => (_hostname, options, callback) => {
  if (options.all) callback(null, [{ address: target.address, family: target.family }])
  else callback(null, target.address, target.family)
}

const networkError = (error: unknown): string => {
  if (error instanceof Error) {
    const code = "code" in error && typeof error.code === "string" ? error.code : undefined
    return code ? `network error: ${code}` : `network error: ${error.message}`
  }
  return "network error"
}

export const postWebhook = (options: {
  readonly target: ResolvedTarget
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  readonly timeoutMs: number
  readonly agents: Agents
}): Effect.Effect<WireResult> => {
  const { target } = options
  const started = performance.now()
  const elapsed = () => Math.round(performance.now() - started)
  const send = Effect.async<WireResult>((resume, signal) => {
    const secure = target.url.protocol === "https:"
    const body = Buffer.from(options.body, "utf8")
    const request = (secure ? Https : Http).request(target.url, {
      method: "POST",
      agent: secure ? options.agents.https : options.agents.http,
      lookup: pinnedLookup(target),
      signal,
      headers: { ...options.headers, "content-length": String(body.length) }
    })
    let settled = false
    const settle = (result: WireResult) => {
      if (settled) return
      settled = true
      resume(Effect.succeed(result))
    }
    request.on("error", (error) => settle({ statusCode: null, latencyMs: elapsed(), error: networkError(error), snippet: null, retryAfter: null }))
    request.on("response", (response) => {
      const chunks: Array<Buffer> = []
      let size = 0
      const finish = () => {
        const snippet = Buffer.concat(chunks).subarray(0, RESPONSE_SNIPPET_BYTES).toString("utf8")
        const retryAfter = response.headers["retry-after"]
        settle({
          statusCode: response.statusCode ?? null,
          latencyMs: elapsed(),
          error: null,
          snippet: snippet.length > 0 ? snippet : null,
          retryAfter: typeof retryAfter === "string" ? retryAfter : null
        })
      }
      response.on("data", (chunk: Buffer) => {
        if (size < RESPONSE_SNIPPET_BYTES) chunks.push(chunk)
        size += chunk.length
        if (size >= RESPONSE_SNIPPET_BYTES) {
          finish()
          response.destroy()
        }
      })
      response.on("end", finish)
      response.on("error", finish)
      response.on("close", finish)
    })
    request.end(body)
  })
  return send.pipe(
    Effect.timeoutTo({
      duration: Duration.millis(options.timeoutMs),
      onTimeout: () => ({
        statusCode: null,
        latencyMs: elapsed(),
        error: `timed out after ${options.timeoutMs} ms`,
        snippet: null,
        retryAfter: null
      }),
      onSuccess: (result: WireResult) => result
    })
  )
}

/** `Retry-After` as a delay in ms (delta-seconds or an HTTP date), if present and sensible. */
export const parseRetryAfter = (value: string | null, now: number): Option.Option<number> => {
  if (value === null) return Option.none()
  const trimmed = value.trim()
  if (/^\d+$/.test(trimmed)) return Option.some(Number(trimmed) * 1000)
  const at = Date.parse(trimmed)
  return Number.isFinite(at) ? Option.some(Math.max(0, at - now)) : Option.none()
}
