/** Conditional, cacheable responses: a strong ETag over the body, `If-None-Match` answered with 304. */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import * as Crypto from "node:crypto"

export const etagOf = (body: string) =>
  `"${Crypto.createHash("sha256").update(body, "utf8").digest("base64url").slice(0, 32)}"`

const matches = (header: string | undefined, etag: string) =>
  header !== undefined &&
  header.split(",").map((tag) => tag.trim().replace(/^W\//, "")).some((tag) => tag === etag || tag === "*")

/**
 * The body as a 200 with `Cache-Control` and `ETag`, or a bodyless 304 when the request's `If-None-Match` names
 * the same ETag. `maxAgeSeconds` applies to browsers and shared caches (`s-maxage`).
 */
export const cachedResponse = (body: string, contentType: string, maxAgeSeconds: number) =>
  Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
    const etag = etagOf(body)
    const headers = { "cache-control": `public, max-age=${maxAgeSeconds}, s-maxage=${maxAgeSeconds}`, etag }
    return matches(request.headers["if-none-match"], etag)
      ? HttpServerResponse.empty({ status: 304, headers })
      : HttpServerResponse.text(body, { contentType, headers })
  })
