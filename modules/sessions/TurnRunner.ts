/**
 * Runs an open turn's model calls, in the process that holds the turn's lease, until the turn completes, pauses
 * or fails. The model is called only through `ChatGateway.stream`. Each chunk of upstream deltas is appended to
 * the log as it arrives (then streamed by the followers), so nothing waits for the end of the answer.
 *
 * The runner is forked outside the request, so a client that disconnects does not stop it. It renews its lease
 * while it runs; a lost lease (a sweep judged it dead) or a conflicting append (the session was deleted or the
 * turn failed elsewhere) stops it without writing anything more.
 */
import type { SqlError } from "@effect/sql/SqlError"
import { Cause, Duration, Effect, Either, Ref, Schedule, Stream } from "effect"
import { generateId } from "../../layers/crypto.ts"
import type { ChatDelta } from "../../layers/providers/types.ts"
import { type CallContext, ChatGateway, upstreamFailure } from "../chat/Service.ts"
import { type LogEvent, parsedArguments, type StepToolCall } from "./events.ts"
import { type EventLog, SessionConflict } from "./EventLog.ts"
import { modelRequest, pausesFor, type SessionState, turnOutput, turnUsage } from "./state.ts"

export interface RunnerDeps {
  readonly log: EventLog
  readonly gateway: ChatGateway
  readonly processId: string
  readonly leaseMs: number
}

export interface TurnContext {
  readonly projectId: string
  readonly tenantId: string | null
  readonly requestId: string | null
}

class LeaseLost extends Error {}

interface PartialCall {
  id: string | undefined
  name: string
  arguments: string
}

export const failedEvent = (state: SessionState, code: string, message: string): ReadonlyArray<LogEvent> =>
  state.turn === null ? [] : [{ type: "turn.failed", turn_number: state.turn.number, error: { code, message } }]

/** Runs the open turn of `start` (whose lease this process holds) to its end, pause or failure. */
export const runTurn = (deps: RunnerDeps, start: SessionState, context: TurnContext): Effect.Effect<void> =>
  Effect.gen(function*() {
    const current = yield* Ref.make(start)
    const release = { _tag: "release" } as const

    const append = (events: ReadonlyArray<LogEvent>, lease: "keep" | "release" = "keep") =>
      Ref.get(current).pipe(
        Effect.flatMap((state) =>
          deps.log.append(state.id, state, events, { lease: lease === "release" ? release : { _tag: "keep" } })
        ),
        Effect.tap((appended) => Ref.set(current, appended.state))
      )

    /** Ends the open turn with `turn.failed` (nothing to do when it already ended). */
    const fail = (code: string, message: string) =>
      Ref.get(current).pipe(Effect.flatMap((state) => {
        const events = failedEvent(state, code, message)
        return events.length === 0 ? Effect.void : append(events, "release")
      }))

    const callContext: CallContext = {
      projectId: context.projectId,
      tenantId: context.tenantId,
      agentId: start.agentId,
      sessionId: start.id,
      requestId: context.requestId,
      kind: "session"
    }

    /** One model call: streams its text into the log; returns whether the turn goes on with another call. */
    const modelStep: Effect.Effect<boolean, SessionConflict | SqlError> = Effect.gen(function*() {
      const state = yield* Ref.get(current)
      const turn = state.turn
      if (turn === null) return false
      const opened = yield* Effect.either(deps.gateway.stream(callContext, modelRequest(state, turn)))
      if (Either.isLeft(opened)) {
        yield* fail(opened.left.code, opened.left.message)
        return false
      }
      let text = ""
      const calls = new Map<number, PartialCall>()
      let summary: { usage: { promptTokens: number; completionTokens: number; cachedTokens: number }; cost: number; model: string; provider: string } | null =
        null
      const onDelta = (delta: ChatDelta) => {
        if (delta.type === "tool_call") {
          const call = calls.get(delta.index) ?? { id: undefined, name: "", arguments: "" }
          if (delta.id !== undefined) call.id = delta.id
          if (delta.name !== undefined) call.name += delta.name
          call.arguments += delta.arguments
          calls.set(delta.index, call)
        }
      }
      const streamed = yield* opened.right.deltas.pipe(
        Stream.runForEachChunk((chunk) =>
          Effect.gen(function*() {
            const deltas: Array<LogEvent> = []
            for (const delta of chunk) {
              if (delta.type === "summary") {
                summary = {
                  usage: delta.usage,
                  cost: (delta.cost.providerCostUsd ?? 0) + delta.cost.serviceChargeUsd,
                  model: delta.route.model,
                  provider: delta.route.provider
                }
              } else if (delta.type === "text") {
                if (delta.text !== "") {
                  text += delta.text
                  deltas.push({ type: "response.output_text.delta", delta: delta.text })
                }
              } else {
                onDelta(delta)
              }
            }
            if (deltas.length > 0) yield* append(deltas)
          })
        ),
        Effect.either
      )
      if (Either.isLeft(streamed)) {
        const error = streamed.left
        if (error._tag === "UpstreamError") {
          const failure = upstreamFailure(error)
          yield* fail(failure.code, failure.message)
          return false
        }
        return yield* error
      }
      const used = summary ?? { usage: { promptTokens: 0, completionTokens: 0, cachedTokens: 0 }, cost: 0, model: turn.model, provider: "" }
      const toolCalls: Array<StepToolCall> = [...calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => ({
        action_id: generateId("act"),
        call_id: call.id ?? generateId("call"),
        name: call.name,
        arguments: call.arguments === "" ? "{}" : call.arguments,
        pauses: pausesFor(call.name, turn.tools, turn.pauseOnToolCalls)
      }))
      const stepEvent: LogEvent = {
        type: "model.step",
        turn_number: turn.number,
        text,
        tool_calls: toolCalls,
        usage: {
          input_tokens: used.usage.promptTokens,
          output_tokens: used.usage.completionTokens,
          cached_tokens: used.usage.cachedTokens
        },
        cost: Math.round(used.cost * 1e8) / 1e8,
        model: used.model,
        provider: used.provider
      }
      const pausing = toolCalls.filter((call) => call.pauses)
      if (pausing.length > 0) {
        yield* append([
          stepEvent,
          ...pausing.map((call): LogEvent => ({
            type: "turn.paused",
            reason: "approval_required",
            action_id: call.action_id,
            tool: call.name,
            arguments: parsedArguments(call.arguments)
          }))
        ], "release")
        return false
      }
      // No pause: text only, or calls handed to the client in `turn.completed.output`.
      const stepped = yield* append([stepEvent])
      const ended = stepped.state.turn
      if (ended === null) return false
      yield* append([{ type: "turn.completed", turn_number: ended.number, output: turnOutput(ended), usage: turnUsage(ended) }], "release")
      return false
    })

    const steps = modelStep.pipe(Effect.repeat({ while: (more) => more }), Effect.asVoid)

    const heartbeat = Effect.gen(function*() {
      const until = new Date((yield* deps.log.now).getTime() + deps.leaseMs)
      const held = yield* deps.log.repo.renewLease(start.id, deps.processId, until)
      if (!held) return yield* Effect.die(new LeaseLost("lease lost"))
    }).pipe(
      Effect.catchTag("SqlError", (error) => Effect.logWarning("session lease renewal failed", error)),
      Effect.repeat(Schedule.spaced(Duration.millis(Math.max(50, Math.floor(deps.leaseMs / 3))))),
      Effect.zipRight(Effect.never)
    )

    yield* Effect.raceFirst(steps, heartbeat).pipe(
      Effect.catchAllCause((cause) => {
        if (Cause.isInterruptedOnly(cause)) return Effect.interrupt
        const failure = Cause.squash(cause)
        if (failure instanceof SessionConflict || failure instanceof LeaseLost) {
          return Effect.logInfo("session turn stopped: the session changed elsewhere")
        }
        return Effect.logError("session turn failed", cause).pipe(
          Effect.zipRight(fail("internal_error", "The turn failed inside the gateway.")),
          Effect.catchAll(() => Effect.void)
        )
      }),
      Effect.onInterrupt(() =>
        fail("turn_interrupted", "The server stopped while the turn was running.").pipe(
          Effect.catchAllCause(() => Effect.void)
        )
      ),
      Effect.annotateLogs({ session_id: start.id, turn_number: start.turn?.number ?? 0 })
    )
  })
