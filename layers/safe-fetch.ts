/**
 * An SSRF-safe HTTP GET for URLs that callers hand us (vision image URLs, web fetches).
 *
 * - http and https only, no credentials in the URL;
 * - the host is resolved and EVERY address must be public unicast (private, loopback, link-local, unique-local,
 *   CGNAT, reserved, NAT64/6to4/Teredo and cloud metadata addresses are refused); the connection then goes to the
 *   address that was checked (a custom `lookup`), so a second DNS answer cannot swap in a private one;
 * - at most 5 redirects, each target checked again the same way;
 * - the body is counted while it streams and the connection is cut past `maxBytes` (a `Content-Length` over it
 *   is refused before reading);
 * - one deadline covers DNS, connects, redirects and the body.
 *
 * `allowLoopback` (config `SAFE_FETCH_ALLOW_LOOPBACK`) lets tests serve from 127.0.0.1; nothing else is relaxed.
 */
import { Data, Duration, Effect } from "effect"
import ipaddr from "ipaddr.js"
import { addressKind } from "./addresses.ts"
import * as Dns from "node:dns/promises"
import * as Http from "node:http"
import * as Https from "node:https"
import type { LookupAddress } from "node:dns"

export type SafeFetchErrorCode =
  | "invalid_url"
  | "unsafe_url"
  | "dns_unavailable"
  | "fetch_timeout"
  | "fetch_failed"
  | "response_too_large"
  | "too_many_redirects"

export class SafeFetchError extends Data.TaggedError("SafeFetchError")<{
  readonly code: SafeFetchErrorCode
  readonly message: string
  /** The URL being fetched when it failed (after redirects). */
  readonly url: string
  /** The upstream status, for `fetch_failed` on an error status. */
  readonly status?: number | undefined
}> {}

export interface SafeFetchOptions {
  /** Largest body accepted, in bytes. */
  readonly maxBytes: number
  /** Deadline for the whole fetch (DNS, connects, redirects, body). */
  readonly timeoutMs: number
  /** Redirects followed (default and most 5). */
  readonly maxRedirects?: number
  /** Permit loopback addresses (tests). */
  readonly allowLoopback?: boolean
  /** Extra request headers, e.g. `accept`. */
  readonly headers?: Readonly<Record<string, string>>
}

export interface FetchedBody {
  /** The URL that answered (after redirects). */
  readonly url: string
  readonly status: number
  readonly contentType: string | undefined
  readonly bytes: Uint8Array
  readonly redirects: number
}

export const MAX_REDIRECTS = 5

const METADATA_HOSTS: ReadonlySet<string> = new Set(["metadata", "metadata.google.internal", "metadata.goog", "instance-data"])

/** Whether an outbound connection to `address` is allowed: public unicast only (plus loopback when allowed). */
export const isAllowedAddress = (address: string, allowLoopback = false): boolean => {
  const kind = addressKind(address)
  return kind === "public" || (allowLoopback && kind === "loopback")
}

const fail = (code: SafeFetchErrorCode, url: string, message: string, status?: number) =>
  new SafeFetchError({ code, url, message, status })

/** Parses and checks the URL itself: scheme and credentials. */
export const parseSafeUrl = (raw: string): Effect.Effect<URL, SafeFetchError> =>
  Effect.gen(function*() {
    const url = yield* Effect.try({
      try: () => new URL(raw),
      catch: () => fail("invalid_url", raw, "not a valid absolute URL")
    })
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      return yield* fail("invalid_url", raw, `the ${url.protocol.replace(/:$/, "")} scheme is not allowed (http and https only)`)
    }
    if (url.username !== "" || url.password !== "") {
      return yield* fail("unsafe_url", raw, "URLs with embedded credentials are not fetched")
    }
    return url
  })

/** Resolves the URL's host and checks every address; answers the address to connect to. */
export const resolveSafeAddress = (url: URL, allowLoopback: boolean): Effect.Effect<LookupAddress, SafeFetchError> =>
  Effect.gen(function*() {
    const href = url.toString()
    const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase()
    if (METADATA_HOSTS.has(host.replace(/\.$/, ""))) {
      return yield* fail("unsafe_url", href, `${host} is a cloud metadata host`)
    }
    if (ipaddr.isValid(host)) {
      if (!isAllowedAddress(host, allowLoopback)) {
        return yield* fail("unsafe_url", href, `${host} is not a public address`)
      }
      return { address: host, family: host.includes(":") ? 6 : 4 }
    }
    const addresses = yield* Effect.tryPromise({
      try: () => Dns.lookup(host, { all: true, verbatim: true }),
      catch: () => fail("dns_unavailable", href, `${host} could not be resolved`)
    })
    if (addresses.length === 0) return yield* fail("dns_unavailable", href, `${host} has no addresses`)
    const refused = addresses.find((a) => !isAllowedAddress(a.address, allowLoopback))
    if (refused !== undefined) {
      return yield* fail("unsafe_url", href, `${host} resolves to a non-public address`)
    }
    return addresses[0]!
  })

type Hop =
  | { readonly _tag: "redirect"; readonly location: string }
  | { readonly _tag: "body"; readonly status: number; readonly contentType: string | undefined; readonly bytes: Uint8Array }

const REDIRECTS: ReadonlySet<number> = new Set([301, 302, 303, 307, 308])

/** One GET to a checked address; follows nothing. Interrupting it destroys the socket. */
const getOnce = (url: URL, address: LookupAddress, options: SafeFetchOptions): Effect.Effect<Hop, SafeFetchError> =>
  Effect.async<Hop, SafeFetchError>((resume) => {
    const href = url.toString()
    let settled = false
    const settle = (effect: Effect.Effect<Hop, SafeFetchError>) => {
      if (settled) return
      settled = true
      resume(effect)
    }
    const lib = url.protocol === "https:" ? Https : Http
    const request = lib.request(url, {
      method: "GET",
      agent: false,
      headers: { "user-agent": "agent-gateway/1 (+safe-fetch)", accept: "*/*", ...options.headers },
      // Connect to the address that was checked, whatever DNS says now.
      lookup: (_hostname, lookupOptions, callback) => {
        if (lookupOptions.all === true) {
          ;(callback as (error: null, addresses: Array<LookupAddress>) => void)(null, [address])
        } else {
          ;(callback as (error: null, address: string, family: number) => void)(null, address.address, address.family)
        }
      }
    }, (response) => {
      const status = response.statusCode ?? 0
      const location = response.headers.location
      if (REDIRECTS.has(status) && location !== undefined) {
        response.resume()
        settle(Effect.succeed({ _tag: "redirect", location }))
        request.destroy()
        return
      }
      if (status < 200 || status > 299) {
        response.resume()
        settle(Effect.fail(fail("fetch_failed", href, `the server answered ${status}`, status)))
        request.destroy()
        return
      }
      const declared = Number(response.headers["content-length"] ?? "")
      if (Number.isFinite(declared) && declared > options.maxBytes) {
        settle(Effect.fail(fail("response_too_large", href, `the body (${declared} bytes) is over ${options.maxBytes} bytes`)))
        request.destroy()
        return
      }
      const chunks: Array<Buffer> = []
      let size = 0
      response.on("data", (chunk: Buffer) => {
        size += chunk.length
        if (size > options.maxBytes) {
          settle(Effect.fail(fail("response_too_large", href, `the body is over ${options.maxBytes} bytes`)))
          request.destroy()
          return
        }
        chunks.push(chunk)
      })
      response.on("end", () => {
        const contentType = response.headers["content-type"]
        settle(Effect.succeed({ _tag: "body", status, contentType, bytes: new Uint8Array(Buffer.concat(chunks)) }))
      })
      response.on("aborted", () => settle(Effect.fail(fail("fetch_failed", href, "the connection closed before the body ended"))))
      response.on("error", (error) => settle(Effect.fail(fail("fetch_failed", href, error.message))))
    })
    request.on("error", (error) => settle(Effect.fail(fail("fetch_failed", href, error.message))))
    request.end()
    return Effect.sync(() => {
      settled = true
      request.destroy()
    })
  })

/** GETs `raw` under the rules above. */
export const safeFetch = (raw: string, options: SafeFetchOptions): Effect.Effect<FetchedBody, SafeFetchError> => {
  const maxRedirects = Math.min(options.maxRedirects ?? MAX_REDIRECTS, MAX_REDIRECTS)
  const allowLoopback = options.allowLoopback ?? false
  const loop = (current: URL, redirects: number): Effect.Effect<FetchedBody, SafeFetchError> =>
    Effect.gen(function*() {
      const address = yield* resolveSafeAddress(current, allowLoopback)
      const hop = yield* getOnce(current, address, options)
      if (hop._tag === "body") {
        return { url: current.toString(), status: hop.status, contentType: hop.contentType, bytes: hop.bytes, redirects }
      }
      if (redirects >= maxRedirects) {
        return yield* fail("too_many_redirects", current.toString(), `more than ${maxRedirects} redirects`)
      }
      const next = yield* Effect.try({
        try: () => new URL(hop.location, current).toString(),
        catch: () => fail("invalid_url", current.toString(), "the redirect location is not a valid URL")
      })
      return yield* loop(yield* parseSafeUrl(next), redirects + 1)
    })
  return parseSafeUrl(raw).pipe(
    Effect.flatMap((url) => loop(url, 0)),
    Effect.timeoutFail({
      duration: Duration.millis(options.timeoutMs),
      onTimeout: () => fail("fetch_timeout", raw, `no complete answer within ${options.timeoutMs} ms`)
    })
  )
}
