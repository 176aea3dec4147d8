/** The receiver helper `verifyWebhookSignature` (§6.2 rule 2): true only for the right HMAC, never throws. */
import { sign as octokitSign, verify as octokitVerify } from "@octokit/webhooks-methods"
import { describe, expect, it } from "vitest"
import { isWebhookTimestampFresh, signWebhookPayload, verifyWebhookSignature } from "../../sdk/webhooks.ts"

const secret = "whsec_test-secret"
const body = '{"type":"session.created","timestamp":"2026-01-01T00:00:00.000Z","api_version":"1.1.0","data":{"event_id":"evt_1"}}'

describe("verifyWebhookSignature", () => {
  it("accepts the signature octokit computes, and octokit accepts ours", async () => {
    const header = await octokitSign(secret, body)
    expect(header).toBe(signWebhookPayload(secret, body))
    expect(verifyWebhookSignature(secret, body, header)).toBe(true)
    expect(await octokitVerify(secret, body, signWebhookPayload(secret, body))).toBe(true)
  })

  it("accepts the raw body as bytes", () => {
    expect(verifyWebhookSignature(secret, new TextEncoder().encode(body), signWebhookPayload(secret, body))).toBe(true)
  })

  it("accepts upper-case hex", () => {
    const header = signWebhookPayload(secret, body)
    expect(verifyWebhookSignature(secret, body, `sha256=${header.slice(7).toUpperCase()}`)).toBe(true)
  })

  it("rejects a body changed by one byte, or re-serialised JSON", () => {
    const header = signWebhookPayload(secret, body)
    expect(verifyWebhookSignature(secret, body.replace("evt_1", "evt_2"), header)).toBe(false)
    expect(verifyWebhookSignature(secret, JSON.stringify(JSON.parse(body), null, 2), header)).toBe(false)
  })

  it("rejects another secret", () => {
    expect(verifyWebhookSignature("whsec_other", body, signWebhookPayload(secret, body))).toBe(false)
  })

  it.each([
    ["missing", undefined],
    ["null", null],
    ["empty", ""],
    ["no scheme", signWebhookPayload(secret, body).slice(7)],
    ["another scheme", `sha1=${signWebhookPayload(secret, body).slice(7)}`],
    ["not hex", `sha256=${"z".repeat(64)}`],
    ["too short", signWebhookPayload(secret, body).slice(0, -2)],
    ["too long", `${signWebhookPayload(secret, body)}00`],
    ["32 bytes of base64", `sha256=${Buffer.alloc(32, 1).toString("base64")}`],
    ["an array of headers", [signWebhookPayload(secret, body)]]
  ])("answers false, without throwing, for a %s header", (_name, header) => {
    expect(() => verifyWebhookSignature(secret, body, header)).not.toThrow()
    expect(verifyWebhookSignature(secret, body, header)).toBe(false)
  })

  it("answers false for an empty secret and for values of the wrong type", () => {
    const header = signWebhookPayload(secret, body)
    expect(verifyWebhookSignature("", body, header)).toBe(false)
    const untyped = verifyWebhookSignature as (s: unknown, b: unknown, h: unknown) => boolean
    expect(untyped(undefined, body, header)).toBe(false)
    expect(untyped(secret, undefined, header)).toBe(false)
    expect(untyped(secret, 42, header)).toBe(false)
  })
})

describe("isWebhookTimestampFresh", () => {
  it("accepts a timestamp within the window, either side, and rejects one outside it or unparseable", () => {
    const now = Date.parse("2026-01-01T00:10:00.000Z")
    expect(isWebhookTimestampFresh("2026-01-01T00:05:00.000Z", 300, now)).toBe(true)
    expect(isWebhookTimestampFresh("2026-01-01T00:15:00.000Z", 300, now)).toBe(true)
    expect(isWebhookTimestampFresh("2026-01-01T00:04:59.999Z", 300, now)).toBe(false)
    expect(isWebhookTimestampFresh("yesterday", 300, now)).toBe(false)
    expect(isWebhookTimestampFresh(undefined, 300, now)).toBe(false)
  })
})
