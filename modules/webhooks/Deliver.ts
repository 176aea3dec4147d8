/**
 * One delivery attempt as a queue job: load the delivery, sign a fresh body, check the target again, POST it,
 * record the attempt, and answer when to run again (the retry policy of `Policy.ts`).
 */
import { Clock, Effect, Either, Option, Redacted, Schema } from "effect"
import type { SecretBox } from "../../layers/crypto.ts"
import { JobKind, JobOutcome } from "../../layers/queue/JobQueue.ts"
import { WEBHOOK_API_VERSION } from "../../schemas/events.ts"
import { judge, nextAttemptAt, type Verdict } from "./Policy.ts"
import type { AttemptRow, DeliveryRow, makeWebhooksRepo } from "./Repo.ts"
import { signWebhookPayload } from "./signature.ts"
import { resolveTarget, TargetRejected } from "./Target.ts"
import { type Agents, postWebhook, type WireResult } from "./Transport.ts"

/** Sends one delivery; its handler keeps the delivery's own retry schedule, so the job itself rarely fails. */
export const DeliverWebhook = JobKind.make("webhooks.deliver", Schema.Struct({ delivery_id: Schema.String }), {
  maxAttempts: 1000
})

const USER_AGENT = `agent-gateway-webhooks/${WEBHOOK_API_VERSION}`

const nowDate = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

/** The exact body of one attempt: the stored event data, framed with this attempt's timestamp. */
export const renderBody = (row: DeliveryRow, timestamp: Date): string =>
  `{"type":${JSON.stringify(row.event_type)},"timestamp":${JSON.stringify(timestamp.toISOString())},` +
  `"api_version":${JSON.stringify(WEBHOOK_API_VERSION)},"occurred_at":${JSON.stringify(row.occurred_at.toISOString())},` +
  `"data":${row.event_data}}`

export const makeDeliver = (options: {
  readonly repo: Effect.Effect.Success<typeof makeWebhooksRepo>
  readonly box: SecretBox["Type"]
  readonly agents: Agents
  readonly allowPrivateTargets: boolean
  readonly attemptTimeoutMs: number
}) => {
  const { agents, allowPrivateTargets, attemptTimeoutMs, box, repo } = options

  /** Checks the target again (DNS may have changed), POSTs to the checked address, and judges the answer. */
  const send = (url: string, headers: Readonly<Record<string, string>>, body: string) =>
    Effect.gen(function*() {
      const target = yield* resolveTarget(new URL(url), allowPrivateTargets).pipe(Effect.either)
      if (Either.isLeft(target) && target.left instanceof TargetRejected) {
        // Nothing was sent: a target that turned private is not tried again.
        const wire: WireResult = { statusCode: null, latencyMs: null, error: null, snippet: null, retryAfter: null }
        const verdict: Verdict = { _tag: "Final", error: `blocked: ${target.left.message}` }
        return { wire, verdict, finished: yield* Clock.currentTimeMillis }
      }
      const wire: WireResult = Either.isRight(target)
        ? yield* postWebhook({ target: target.right, headers, body, timeoutMs: attemptTimeoutMs, agents })
        : { statusCode: null, latencyMs: null, error: target.left.message, snippet: null, retryAfter: null }
      const finished = yield* Clock.currentTimeMillis
      return { wire, verdict: judge(wire, finished), finished }
    })

  /** Sends one attempt of a delivery and records it; answers the job outcome. */
  const deliver = (deliveryId: string) =>
    Effect.gen(function*() {
      const row = yield* repo.loadForSend(deliveryId)
      if (!row || row.status !== "pending") return JobOutcome.Done()
      const started = yield* nowDate
      if (row.next_attempt_at !== null && row.next_attempt_at > started) {
        return JobOutcome.RetryAt({ at: row.next_attempt_at, error: "not due yet" })
      }
      if (!row.enabled) {
        yield* repo.abandon(row.id, "endpoint disabled", started)
        return JobOutcome.Done()
      }
      const attempt = row.attempt_count + 1
      const secret = yield* box.decrypt(row.secret_ciphertext).pipe(Effect.option)
      if (Option.isNone(secret)) {
        yield* repo.abandon(row.id, "the endpoint secret cannot be decrypted", started)
        return JobOutcome.Done()
      }
      const body = renderBody(row, started)
      const headers = {
        "content-type": "application/json",
        "user-agent": USER_AGENT,
        "x-webhook-signature": signWebhookPayload(Redacted.value(secret.value), body),
        "x-webhook-event": row.event_type,
        "x-webhook-timestamp": started.toISOString(),
        "x-webhook-delivery": row.id
      }
      const { wire, verdict, finished } = yield* send(row.url, headers, body)
      const attemptRow: AttemptRow = {
        delivery_id: row.id,
        attempt,
        attempted_at: started,
        status_code: wire.statusCode,
        latency_ms: wire.latencyMs,
        error: verdict._tag === "Succeeded" ? null : verdict.error,
        response_snippet: wire.snippet
      }
      const finishedAt = new Date(finished)
      switch (verdict._tag) {
        case "Succeeded": {
          yield* repo.recordAttempt(attemptRow, { _tag: "Succeeded", now: finishedAt })
          yield* Effect.logInfo("webhook delivered")
          return JobOutcome.Done()
        }
        case "Final": {
          yield* repo.recordAttempt(attemptRow, { _tag: "Failed", error: verdict.error, now: finishedAt })
          yield* Effect.logWarning("webhook delivery failed for good", verdict.error)
          return JobOutcome.Done()
        }
        case "Retry": {
          const next = nextAttemptAt({
            attempt,
            finishedAt: finished,
            deadline: row.deadline_at.getTime(),
            retryAfterMs: verdict.retryAfterMs
          })
          if (Option.isNone(next)) {
            yield* repo.recordAttempt(attemptRow, {
              _tag: "Failed",
              error: verdict.error,
              now: finishedAt,
              markEndpointFailing: `delivery ${row.id} failed every attempt for 24 hours (retry budget spent)`
            })
            yield* Effect.logWarning("webhook retry budget spent; endpoint marked failing", verdict.error)
            return JobOutcome.Done()
          }
          yield* repo.recordAttempt(attemptRow, { _tag: "Retry", error: verdict.error, at: next.value })
          yield* Effect.logInfo("webhook attempt failed, will retry", verdict.error)
          return JobOutcome.RetryAt({ at: next.value, error: verdict.error })
        }
      }
    }).pipe(Effect.annotateLogs({ delivery_id: deliveryId }))
  return deliver
}
