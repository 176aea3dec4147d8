/**
 * Webhook signatures (§6.2): `X-Webhook-Signature: sha256=<64 hex chars>`, the HMAC-SHA256 of the exact raw
 * body under the endpoint secret (`whsec_…`, used as UTF-8 text). Self-contained (node:crypto only) so receivers
 * can use it through `sdk/webhooks.ts`.
 */
import * as Crypto from "node:crypto"

const SIGNATURE = /^sha256=([0-9a-fA-F]{64})$/

const toBuffer = (body: string | Uint8Array): Buffer =>
  typeof body === "string" ? Buffer.from(body, "utf8") : Buffer.from(body.buffer, body.byteOffset, body.byteLength)

/** The header value for `body`: `sha256=` and the lowercase hex HMAC-SHA256. */
export const signWebhookPayload = (secret: string, body: string | Uint8Array): string =>
  `sha256=${Crypto.createHmac("sha256", secret).update(toBuffer(body)).digest("hex")}`

/**
 * True when `header` is the signature of `rawBody` under `secret`. Pass the body exactly as received (before
 * any JSON parsing). Answers false, and never throws, for a missing, malformed or wrongly sized header or a
 * wrong secret; the digests are compared in constant time.
 */
export const verifyWebhookSignature = (
  secret: string,
  rawBody: string | Uint8Array,
  header: string | ReadonlyArray<string> | null | undefined
): boolean => {
  try {
    if (typeof secret !== "string" || secret.length === 0 || typeof header !== "string") return false
    const match = SIGNATURE.exec(header.trim())
    if (!match || match[1] === undefined) return false
    const presented = Buffer.from(match[1], "hex")
    const expected = Crypto.createHmac("sha256", secret).update(toBuffer(rawBody)).digest()
    return presented.length === expected.length && Crypto.timingSafeEqual(presented, expected)
  } catch {
    return false
  }
}

/**
 * True when a payload `timestamp` (ISO 8601, or the `X-Webhook-Timestamp` header) lies within `toleranceSeconds`
 * of `now` (default 5 minutes): receivers reject older bodies so a captured delivery cannot be replayed later.
 */
export const isWebhookTimestampFresh = (
  timestamp: string | null | undefined,
  toleranceSeconds = 300,
  now: number = Date.now()
): boolean => {
  if (typeof timestamp !== "string") return false
  const at = Date.parse(timestamp)
  return Number.isFinite(at) && Math.abs(now - at) <= toleranceSeconds * 1000
}
