/**
 * Base URLs of custom providers and provider connections. They must be plain http(s) URLs without credentials,
 * query or fragment. Whether they may point at private, loopback or link-local networks is the operator's
 * choice (`ALLOW_PRIVATE_PROVIDER_URLS`, default true because self-hosted models live there). When private
 * networks are forbidden the host is resolved and every address must be public, both when the URL is saved
 * and again right before each outbound call (so a DNS change cannot sneak a private address in later).
 */
import { Effect } from "effect"
import ipaddr from "ipaddr.js"
import { addressKind } from "./addresses.ts"
import * as Dns from "node:dns/promises"
import { ApiError } from "../schemas/errors.ts"

/** Public unicast only; private, loopback, link-local, unique-local, CGNAT, reserved and the rest are not. */
export const isPublicAddress = (address: string): boolean => addressKind(address) === "public"

const unsafe = (param: string, message: string) => ApiError.badRequest(message, { code: "unsafe_url", param })

/** Parses and normalises a base URL (no trailing slash); fails with a 400 naming `param`. */
export const parseBaseUrl = (raw: string, param: string): Effect.Effect<URL, ApiError> =>
  Effect.gen(function*() {
    const url = yield* Effect.try({
      try: () => new URL(raw.trim()),
      catch: () => ApiError.badRequest(`${param} is not a valid URL`, { code: "invalid_url", param })
    })
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      return yield* ApiError.badRequest(`${param} must use http or https`, { code: "invalid_url", param })
    }
    if (url.username !== "" || url.password !== "") {
      return yield* ApiError.badRequest(`${param} must not embed credentials; pass the API key separately`, {
        code: "invalid_url",
        param
      })
    }
    if (url.search !== "" || url.hash !== "") {
      return yield* ApiError.badRequest(`${param} must not have a query or fragment`, { code: "invalid_url", param })
    }
    return url
  })

export const normaliseBaseUrl = (url: URL) => url.toString().replace(/\/+$/, "")

/** Fails unless every address of the URL's host is public (used when private networks are not allowed). */
export const requirePublicHost = (url: URL, param: string): Effect.Effect<void, ApiError> =>
  Effect.gen(function*() {
    const host = url.hostname.replace(/^\[|\]$/g, "")
    if (ipaddr.isValid(host)) {
      if (!isPublicAddress(host)) return yield* unsafe(param, `${param} points at a private network address`)
      return
    }
    const addresses = yield* Effect.tryPromise({
      try: () => Dns.lookup(host, { all: true, verbatim: true }),
      catch: () => ApiError.badRequest(`${param} host ${host} cannot be resolved`, { code: "invalid_url", param })
    })
    if (addresses.length === 0 || addresses.some((a) => !isPublicAddress(a.address))) {
      return yield* unsafe(param, `${param} resolves to a private network address`)
    }
  })

/** Parses a base URL and applies the private-network setting; answers the normalised URL. */
export const checkBaseUrl = (raw: string, param: string, allowPrivate: boolean): Effect.Effect<string, ApiError> =>
  Effect.gen(function*() {
    const url = yield* parseBaseUrl(raw, param)
    if (!allowPrivate) yield* requirePublicHost(url, param)
    return normaliseBaseUrl(url)
  })
