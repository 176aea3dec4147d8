/**
 * Receiver helpers for gateway webhooks (docs/webhooks.md). Import from `sdk/webhooks.ts`:
 *
 * ```ts
 * import { isWebhookTimestampFresh, verifyWebhookSignature } from "./sdk/webhooks.ts"
 * if (!verifyWebhookSignature(secret, rawBody, req.headers["x-webhook-signature"])) return reply(401)
 * const event = JSON.parse(rawBody)
 * if (!isWebhookTimestampFresh(event.timestamp)) return reply(400)
 * if (await alreadyHandled(event.data.event_id)) return reply(200)
 * ```
 */
export { isWebhookTimestampFresh, signWebhookPayload, verifyWebhookSignature } from "../modules/webhooks/signature.ts"
