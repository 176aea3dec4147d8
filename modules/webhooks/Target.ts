/**
 * Where a webhook may be sent. A target URL is http(s) without embedded credentials, and every address its host
 * resolves to must be a public unicast address: no private, loopback, link-local (cloud metadata at
 * 169.254.169.254), carrier-grade NAT, unique-local or other special range — unless the operator allows private
 * targets (`WEBHOOK_ALLOW_PRIVATE_TARGETS`). Checked when an endpoint is saved and again before every attempt,
 * and the attempt connects to the address that was checked (no second lookup an attacker could change).
 */
import { Data, Duration, Effect, Either } from "effect"
import ipaddr from "ipaddr.js"
import { addressKind } from "../../layers/addresses.ts"
import * as Dns from "node:dns"

export class TargetRejected extends Data.TaggedError("TargetRejected")<{
  readonly code: "invalid_url" | "unsafe_url"
  readonly message: string
}> {}

/** DNS did not answer: a network problem at delivery time (retried), a bad URL at subscribe time. */
export class TargetUnresolved extends Data.TaggedError("TargetUnresolved")<{ readonly message: string }> {}

export interface ResolvedTarget {
  readonly url: URL
  readonly address: string
  readonly family: 4 | 6
}

/** True when a webhook may connect to `address` (an IPv4 or IPv6 literal). */
export const isAllowedAddress = (address: string, allowPrivate: boolean): boolean => {
  const kind = addressKind(address)
  return kind === "public" || (allowPrivate && (kind === "loopback" || kind === "private"))
}

/** Parses and checks the form of a target URL (scheme, credentials, host). */
export const parseTargetUrl = (raw: string): Either.Either<URL, TargetRejected> => {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return Either.left(new TargetRejected({ code: "invalid_url", message: "url is not a valid absolute URL" }))
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    return Either.left(new TargetRejected({ code: "invalid_url", message: "url must use http or https" }))
  }
  if (url.username !== "" || url.password !== "") {
    return Either.left(new TargetRejected({ code: "invalid_url", message: "url must not embed credentials" }))
  }
  if (url.hostname === "") {
    return Either.left(new TargetRejected({ code: "invalid_url", message: "url has no host" }))
  }
  return Either.right(url)
}

const bareHost = (url: URL) => url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname

const lookupAll = (host: string) =>
  Effect.tryPromise({
    try: () => Dns.promises.lookup(host, { all: true, verbatim: true }),
    catch: (cause) =>
      new TargetUnresolved({
        message: `cannot resolve ${host}: ${
          cause instanceof Error && "code" in cause ? String(cause.code) : "lookup failed"
        }`
      })
  }).pipe(
    Effect.timeoutFail({
      duration: Duration.seconds(5),
      onTimeout: () => new TargetUnresolved({ message: `cannot resolve ${host}: lookup timed out` })
    })
  )

/** Resolves the URL's host and checks every address; answers the first one to connect to. */
export const resolveTarget = (
  url: URL,
  allowPrivate: boolean
): Effect.Effect<ResolvedTarget, TargetRejected | TargetUnresolved> =>
  Effect.gen(function*() {
    const host = bareHost(url)
    const addresses = ipaddr.isValid(host)
      ? [{ address: host, family: host.includes(":") ? 6 : 4 }]
      : yield* lookupAll(host)
    const first = addresses[0]
    if (first === undefined) return yield* new TargetUnresolved({ message: `cannot resolve ${host}: no addresses` })
    const blocked = addresses.find((entry) => !isAllowedAddress(entry.address, allowPrivate))
    if (blocked !== undefined) {
      return yield* new TargetRejected({
        code: "unsafe_url",
        message: `url resolves to ${blocked.address}, a private, loopback, link-local or reserved address`
      })
    }
    return { url, address: first.address, family: first.family === 6 ? 6 : 4 }
  })
