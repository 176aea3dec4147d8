/**
 * Durable sessions (§2.9, §3, §4.3, §6.1): create, turns, approve, reject, get, list, events, delete, and the
 * stream that replays and follows a session's log. Every change goes through `EventLog.append`; state is rebuilt
 * from the log (latest checkpoint plus tail) before each change. Turns run in a forked runner that outlives the
 * request (`TurnRunner.ts`); responses are followers of the log (`stream.ts`).
 *
 * Each process sweeps periodically: turns whose lease ran out (their process died) are failed, and sessions idle
 * for `SESSION_IDLE_TTL_SECONDS` (7 days) are completed. Both are guarded appends, so any number of processes
 * can sweep at once.
 */
import type { SqlError } from "@effect/sql/SqlError"
import { Duration, Effect, FiberMap, Option, Schedule, Stream } from "effect"
import { AppConfig } from "../../layers/config.ts"
import { generateId } from "../../layers/crypto.ts"
import { ApiError } from "../../schemas/errors.ts"
import {
  type ApproveRequest,
  EVENT_PAGE,
  type FunctionToolDefinition,
  type Pagination,
  type Session,
  SESSION_PAGE,
  type SessionEvent,
  type SessionStatus,
  type TurnRequest
} from "../../schemas/sessions.ts"
import { ChatGateway } from "../chat/Service.ts"
import type { LogEvent, StoredEvent } from "./events.ts"
import { type Appended, makeEventLog, SessionConflict } from "./EventLog.ts"
import type { Owner, SessionRow } from "./Repo.ts"
import { apply, type SessionState, turnOutput, turnUsage } from "./state.ts"
import { follow } from "./stream.ts"
import { failedEvent, runTurn, type TurnContext } from "./TurnRunner.ts"

export const sessionNotFound = () => ApiError.notFound("Session", "session_not_found")

const turnInProgress = (state: SessionState) => {
  const pending = state.turn?.actions.filter((action) => action.status === "pending") ?? []
  return ApiError.conflict(
    pending.length > 0
      ? `Turn ${state.turn?.number} is paused waiting for approve or reject of ${pending.map((a) => a.actionId).join(", ")}`
      : `Turn ${state.turn?.number ?? state.turnCount} of this session is still running`,
    "turn_in_progress"
  )
}

const sessionCompleted = () =>
  ApiError.conflict("The session is completed and accepts no more turns or approvals", "session_completed")

const actionNotFound = (actionId: string) =>
  new ApiError({
    status: 404,
    type: "not_found_error",
    code: "action_not_found",
    message: `Action ${actionId} is not an action of this session's open turn`,
    param: "action_id"
  })

const actionNotPending = (actionId: string, status: string) =>
  new ApiError({
    status: 409,
    type: "conflict_error",
    code: "action_not_pending",
    message: `Action ${actionId} is not pending (it is ${status})`,
    param: "action_id"
  })

const toIso = (date: Date) => date.toISOString()

export const sessionView = (row: SessionRow): Session => ({
  id: row.id,
  status: row.status,
  turn_count: row.turn_count,
  created_at: toIso(row.created_at),
  updated_at: toIso(row.updated_at),
  agent_id: row.agent_id,
  metadata: row.metadata,
  total_cost: Number(row.total_cost)
})

export const eventView = (row: StoredEvent): SessionEvent => ({
  id: row.id,
  session_id: row.sessionId,
  turn_number: row.turnNumber,
  sequence: row.sequence,
  event_type: row.type,
  payload: row.payload,
  created_at: toIso(row.createdAt)
})

const pagination = (page: number, limit: number, total: number): Pagination => ({
  page,
  limit,
  total,
  total_pages: Math.ceil(total / limit)
})

/** The caller, as the security middleware gives it. */
export interface Caller {
  readonly projectId: string
  readonly credential: "secret" | "api" | "client"
  readonly tenantId: string | null
  readonly externalUserId: string | null
}

const ownerOf = (caller: Caller): Owner => ({
  projectId: caller.projectId,
  endUser: caller.credential === "client"
    ? { tenantId: caller.tenantId, externalUserId: caller.externalUserId }
    : null
})

/** Function tools of a turn; `web_search_preview` is refused until a web search module exists. */
const functionTools = (request: TurnRequest): Effect.Effect<ReadonlyArray<FunctionToolDefinition>, ApiError> =>
  Effect.gen(function*() {
    const tools: Array<FunctionToolDefinition> = []
    const names = new Set<string>()
    for (const [index, tool] of (request.tools ?? []).entries()) {
      if (tool.type === "web_search_preview") {
        return yield* ApiError.badRequest(
          "web_search_preview is not supported by this gateway: no web search module is configured",
          { code: "unsupported_tool", param: `tools.${index}.type` }
        )
      }
      if (names.has(tool.function.name)) {
        return yield* ApiError.badRequest(`Two tools are named ${tool.function.name}`, {
          code: "duplicate_tool",
          param: `tools.${index}.function.name`
        })
      }
      names.add(tool.function.name)
      tools.push(tool)
    }
    return tools
  })

export class Sessions extends Effect.Service<Sessions>()("Sessions", {
  scoped: Effect.gen(function*() {
    const config = yield* AppConfig
    const gateway = yield* ChatGateway
    const log = yield* makeEventLog
    const settings = config.sessions
    const processId = generateId("proc")
    /** The turn runners of this process, by session; interrupted when the server stops. */
    const runners = yield* FiberMap.make<string>()
    const runnerDeps = { log, gateway, processId, leaseMs: settings.turnLeaseMs }

    const leaseUntil = Effect.map(log.now, (now) => new Date(now.getTime() + settings.turnLeaseMs))

    const visible = (caller: Caller, sessionId: string) =>
      log.repo.findOwned(sessionId, ownerOf(caller)).pipe(
        Effect.orDie,
        Effect.flatMap(Option.match({ onNone: () => Effect.fail(sessionNotFound()), onSome: Effect.succeed }))
      )

    /** The rebuilt state of a session the caller may see. */
    const stateOf = (caller: Caller, sessionId: string) =>
      Effect.gen(function*() {
        yield* visible(caller, sessionId)
        const state = yield* log.load(sessionId).pipe(Effect.orDie)
        if (Option.isNone(state) || state.value.deleted) return yield* sessionNotFound()
        return state.value
      })

    /** Appends, answering 409 `conflict` when another request changed the session at the same moment. */
    const appendOr409 = (
      state: SessionState,
      events: ReadonlyArray<LogEvent>,
      lease: Parameters<typeof log.append>[3]
    ): Effect.Effect<Appended, ApiError> =>
      log.append(state.id, state, events, lease).pipe(
        Effect.catchTag("SessionConflict", () =>
          Effect.fail(ApiError.conflict("The session changed during this request; try again", "session_conflict"))),
        Effect.orDie
      )

    const startRunner = (state: SessionState, context: TurnContext) =>
      FiberMap.run(runners, state.id, runTurn(runnerDeps, state, context))

    const followStream = (sessionId: string, after: number) => follow(log, sessionId, after, settings.streamPollMs)

    const create = (caller: Caller, input: { readonly agentId: string | null; readonly metadata: Readonly<Record<string, unknown>> }) =>
      Effect.gen(function*() {
        const id = generateId("sess")
        yield* log.append(id, null, [{ type: "session.created", agent_id: input.agentId, metadata: input.metadata }], {
          owner: ownerOf(caller)
        }).pipe(Effect.orDie)
        return yield* visible(caller, id).pipe(Effect.map(sessionView))
      })

    const get = (caller: Caller, sessionId: string) => visible(caller, sessionId).pipe(Effect.map(sessionView))

    const list = (caller: Caller, query: { readonly status?: SessionStatus | undefined; readonly page?: number | undefined; readonly limit?: number | undefined }) =>
      Effect.gen(function*() {
        const page = query.page ?? 1
        const limit = query.limit ?? SESSION_PAGE.defaultLimit
        const { rows, total } = yield* log.repo.list(ownerOf(caller), query.status, limit, (page - 1) * limit).pipe(Effect.orDie)
        return { data: rows.map(sessionView), pagination: pagination(page, limit, total) }
      })

    const events = (caller: Caller, sessionId: string, query: { readonly turn_number?: number | undefined; readonly page?: number | undefined; readonly limit?: number | undefined }) =>
      Effect.gen(function*() {
        yield* visible(caller, sessionId)
        const page = query.page ?? 1
        const limit = query.limit ?? EVENT_PAGE.defaultLimit
        const { rows, total } = yield* log.repo.eventsPage(sessionId, query.turn_number, limit, (page - 1) * limit).pipe(
          Effect.orDie
        )
        return { data: rows.map(eventView), pagination: pagination(page, limit, total) }
      })

    const remove = (caller: Caller, sessionId: string) =>
      Effect.gen(function*() {
        const state = yield* stateOf(caller, sessionId)
        yield* appendOr409(state, [{ type: "session.deleted" }], { lease: { _tag: "release" } })
        yield* FiberMap.remove(runners, sessionId)
        return { id: sessionId, deleted: true as const }
      })

    /** Starts a turn; the answer follows the log from `turn.started` to the turn's end or pause. */
    const startTurn = (caller: Caller, sessionId: string, request: TurnRequest, requestId: string | null) =>
      Effect.gen(function*() {
        const tools = yield* functionTools(request)
        const model = request.model ?? settings.defaultModel
        const state = yield* stateOf(caller, sessionId)
        if (state.status === "completed") return yield* sessionCompleted()
        if (state.turn !== null) return yield* turnInProgress(state)
        yield* gateway.router.resolve(caller.projectId, model)
        const turnNumber = state.turnCount + 1
        const started = yield* log.append(sessionId, state, [
          {
            type: "turn.input",
            turn_number: turnNumber,
            input: request.input,
            model,
            instructions: request.instructions ?? null,
            tools,
            pause_on_tool_calls: request.pause_on_tool_calls ?? true
          },
          { type: "turn.started", turn_number: turnNumber }
        ], { lease: { _tag: "acquire", owner: processId, until: yield* leaseUntil } }).pipe(
          Effect.catchTag("SessionConflict", () => Effect.fail(turnInProgress(state))),
          Effect.orDie
        )
        yield* startRunner(started.state, { projectId: caller.projectId, tenantId: caller.tenantId, requestId })
        return followStream(sessionId, state.lastSequence)
      })

    /**
     * Approves `action_id` with its output (and any other pending action of the step given in `tool_results`).
     * When no action of the step is left pending, the same turn goes on with the model; the answer streams the
     * new events (the `turn.resumed` events, then the rest of the turn until it ends or pauses again).
     */
    const approve = (caller: Caller, sessionId: string, request: ApproveRequest, requestId: string | null) =>
      Effect.gen(function*() {
        const state = yield* stateOf(caller, sessionId)
        if (state.status === "completed") return yield* sessionCompleted()
        const turn = state.turn
        const actionOf = (actionId: string) =>
          Option.fromNullable(turn?.actions.find((action) => action.actionId === actionId))
        const named = actionOf(request.action_id)
        if (Option.isNone(named)) return yield* actionNotFound(request.action_id)
        if (named.value.status !== "pending") return yield* actionNotPending(request.action_id, named.value.status)
        const results = new Map<string, string>()
        for (const result of request.tool_results ?? []) {
          const action = actionOf(result.action_id)
          if (Option.isNone(action)) return yield* actionNotFound(result.action_id)
          if (action.value.status !== "pending" && action.value.status !== "returned") {
            return yield* actionNotPending(result.action_id, action.value.status)
          }
          results.set(result.action_id, result.output)
        }
        if (!results.has(request.action_id)) {
          return yield* ApiError.badRequest(`tool_results has no output for ${request.action_id}`, {
            code: "tool_result_required",
            param: "tool_results"
          })
        }
        const newEvents: Array<LogEvent> = []
        for (const [actionId, output] of results) {
          newEvents.push({ type: "tool.result", turn_number: turn!.number, action_id: actionId, output })
        }
        for (const actionId of results.keys()) {
          if (actionOf(actionId).pipe(Option.exists((action) => action.status === "pending"))) {
            newEvents.push({ type: "turn.resumed", action_id: actionId, resolution: "approved" })
          }
        }
        const stillPending = turn!.actions.some((action) => action.status === "pending" && !results.has(action.actionId))
        const appended = yield* appendOr409(state, newEvents, {
          lease: stillPending ? { _tag: "keep" } : { _tag: "acquire", owner: processId, until: yield* leaseUntil }
        })
        if (!stillPending) {
          yield* startRunner(appended.state, { projectId: caller.projectId, tenantId: caller.tenantId, requestId })
        }
        return followStream(sessionId, state.lastSequence)
      })

    /** Rejects a pending action: records it and completes the turn without another model call. */
    const reject = (caller: Caller, sessionId: string, actionId: string) =>
      Effect.gen(function*() {
        const state = yield* stateOf(caller, sessionId)
        if (state.status === "completed") return yield* sessionCompleted()
        const action = state.turn?.actions.find((candidate) => candidate.actionId === actionId)
        if (state.turn === null || action === undefined) return yield* actionNotFound(actionId)
        if (action.status !== "pending") return yield* actionNotPending(actionId, action.status)
        const resumed: Array<LogEvent> = [{ type: "turn.resumed", action_id: actionId, resolution: "rejected" }]
        for (const other of state.turn.actions) {
          if (other.status === "pending" && other.actionId !== actionId) {
            resumed.push({ type: "turn.resumed", action_id: other.actionId, resolution: "cancelled" })
          }
        }
        // The turn as it stands once the rejections are applied gives the completed turn's output.
        const closing = resumed.reduce(
          (folded, event) => apply(folded, event, { sessionId, sequence: folded.lastSequence + 1, createdAt: folded.updatedAt }),
          state
        ).turn ?? state.turn
        yield* appendOr409(state, [
          ...resumed,
          { type: "turn.completed", turn_number: closing.number, output: turnOutput(closing), usage: turnUsage(closing) }
        ], { lease: { _tag: "release" } })
        return { id: sessionId, action_id: actionId, resolution: "rejected" as const, status: "completed" as const }
      })

    /** Replays the log after `after`, then follows the turn in flight (if any) to its end. */
    const stream = (caller: Caller, sessionId: string, after: number) =>
      visible(caller, sessionId).pipe(Effect.as(followStream(sessionId, after)))

    /** Fails turns whose lease ran out (the process running them died): they end with `turn.failed`. */
    const recoverInterruptedTurns: Effect.Effect<number, SqlError> = Effect.gen(function*() {
      const now = yield* log.now
      const expired = yield* log.repo.expiredLeases(now, 100)
      let recovered = 0
      for (const { id, turn_owner } of expired) {
        // A runner of this process that is still alive only missed a renewal (a busy event loop): not dead.
        if (turn_owner === processId && (yield* FiberMap.has(runners, id))) continue
        const loaded = yield* log.load(id)
        if (Option.isNone(loaded)) continue
        const state = loaded.value
        const events = failedEvent(state, "turn_interrupted", "The process running this turn stopped before it finished.")
        if (events.length === 0) continue
        yield* log.append(id, state, events, { lease: { _tag: "release" } }).pipe(
          Effect.tap(() => {
            recovered++
          }),
          Effect.catchTag("SessionConflict", () => Effect.void)
        )
      }
      return recovered
    })

    /** Completes sessions without activity for the idle TTL (7 days), failing a paused turn first. */
    const expireIdleSessions: Effect.Effect<number, SqlError> = Effect.gen(function*() {
      const now = yield* log.now
      const cutoff = new Date(now.getTime() - settings.idleTtlSeconds * 1000)
      const ids = yield* log.repo.idleSince(cutoff, 100)
      let expired = 0
      for (const id of ids) {
        const loaded = yield* log.load(id)
        if (Option.isNone(loaded)) continue
        const state = loaded.value
        if (state.deleted || state.status === "completed" || new Date(state.lastActivityAt) > cutoff) continue
        yield* log.append(id, state, [
          ...failedEvent(state, "session_expired", "The session expired while this turn was paused."),
          { type: "session.completed", reason: "expired" }
        ]).pipe(
          Effect.tap(() => {
            expired++
          }),
          Effect.catchTag("SessionConflict", () => Effect.void)
        )
      }
      return expired
    })

    /** One sweep: crashed turns first (so their sessions can then expire), then idle sessions. */
    const sweep = Effect.all({ recovered: recoverInterruptedTurns, expired: expireIdleSessions })

    yield* sweep.pipe(
      Effect.tap(({ expired, recovered }) =>
        expired + recovered > 0 ? Effect.logInfo("session sweep").pipe(Effect.annotateLogs({ expired, recovered })) : Effect.void
      ),
      Effect.catchAllCause((cause) => Effect.logWarning("session sweep failed", cause)),
      Effect.repeat(Schedule.spaced(Duration.millis(settings.sweepIntervalMs))),
      Effect.forkScoped
    )

    return {
      create,
      get,
      list,
      events,
      remove,
      startTurn,
      approve,
      reject,
      stream,
      sweep,
      /** For tests and the benchmark. */
      log,
      processId
    } as const
  })
}) {}

export type FollowStream = Stream.Stream<StoredEvent, SqlError>
export { SessionConflict }
