/**
 * The session event log: the one way session state changes (`append`), rebuilding state (`load`), and the
 * in-process notifications that tell live streams about committed events (`subscribe`).
 *
 * `append` writes the events, the projection row and (every 50 turns) a checkpoint in one transaction, guarded
 * by the projection's `last_sequence`: if anything else appended since the caller's state was read, nothing is
 * written and it fails with `SessionConflict`. That one guard makes every writer — turn runners, approve and
 * reject on any process, the expiry and crash sweeps — safe against each other without long-held locks.
 */
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Data, Effect, Option, Queue } from "effect"
import { generateId } from "../../layers/crypto.ts"
import type { EventType } from "../../schemas/events.ts"
import { Events } from "../events/Service.ts"
import { type LogEvent, payloadOf, type StoredEvent } from "./events.ts"
import { type LeaseChange, makeSessionsRepo, type Owner } from "./Repo.ts"
import { apply, checkpointDue, rebuild, type SessionState } from "./state.ts"

export class SessionConflict extends Data.TaggedError("SessionConflict")<{ readonly sessionId: string }> {}

export interface Appended {
  readonly state: SessionState
  readonly rows: ReadonlyArray<StoredEvent>
}

/** Webhook event names of the `session` family (§6.2) for the log events that have one. */
const WEBHOOK_TYPES: Readonly<Record<string, EventType>> = {
  "session.created": "session.created",
  "turn.completed": "session.turn_completed",
  "turn.paused": "session.paused",
  "turn.resumed": "session.resumed",
  "session.completed": "session.completed",
  "session.deleted": "session.deleted"
}

/** The webhook events an append produces: `{type, data}` with the event's payload and its place in the log. */
export const webhookEventsOf = (state: SessionState, rows: ReadonlyArray<StoredEvent>) =>
  rows.flatMap((row) => {
    const type = WEBHOOK_TYPES[row.type]
    return type === undefined ? [] : [{
      type,
      data: {
        session_id: state.id,
        session_event_id: row.id,
        turn_number: row.turnNumber,
        sequence: row.sequence,
        status: state.status,
        ...row.payload
      }
    }]
  })

const turnNumberOf = (event: LogEvent, state: SessionState | null): number =>
  "turn_number" in event ? event.turn_number : state === null ? 0 : state.turn?.number ?? state.turnCount

export const makeEventLog = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const repo = yield* makeSessionsRepo
  const events = yield* Events
  /** Streams following a session in this process, by session: each gets the session's committed appends. */
  const listeners = new Map<string, Set<Queue.Queue<ReadonlyArray<StoredEvent>>>>()

  /** A queue of `sessionId`'s committed appends for as long as the scope lasts. */
  const subscribe = (sessionId: string) =>
    Effect.acquireRelease(
      Effect.tap(Queue.unbounded<ReadonlyArray<StoredEvent>>(), (queue) =>
        Effect.sync(() => {
          const set = listeners.get(sessionId) ?? new Set()
          set.add(queue)
          listeners.set(sessionId, set)
        })),
      (queue) =>
        Effect.sync(() => {
          const set = listeners.get(sessionId)
          set?.delete(queue)
          if (set?.size === 0) listeners.delete(sessionId)
        }).pipe(Effect.zipRight(Queue.shutdown(queue)))
    )

  const notify = (sessionId: string, rows: ReadonlyArray<StoredEvent>) =>
    Effect.forEach(listeners.get(sessionId) ?? [], (queue) => Queue.offer(queue, rows), { discard: true })

  const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

  /**
   * Publishes the append's `session.*` webhook events through the outbox. It runs inside the append's
   * transaction, so a webhook event is recorded exactly when its session event is.
   */
  const publishWebhooks = (state: SessionState, rows: ReadonlyArray<StoredEvent>): Effect.Effect<void, SqlError> =>
    Effect.gen(function*() {
      const published = webhookEventsOf(state, rows)
      if (published.length === 0) return
      const owner = yield* sql<{ readonly project_id: string }>`SELECT project_id FROM sessions WHERE id = ${state.id}`
      const projectId = owner[0]?.project_id
      if (projectId === undefined) return
      for (const event of published) yield* events.publish({ projectId, type: event.type, data: event.data })
    })

  /**
   * Appends `events` after `before` (null creates the session: the first event must be `session.created` and
   * `owner` says whose it is). `lease` changes the running turn's lease in the same write.
   */
  const append = (
    sessionId: string,
    before: SessionState | null,
    events: ReadonlyArray<LogEvent>,
    options: { readonly lease?: LeaseChange; readonly owner?: Owner } = {}
  ): Effect.Effect<Appended, SessionConflict | SqlError> =>
    Effect.gen(function*() {
      const at = yield* now
      const createdAt = at.toISOString()
      let state = before
      const rows: Array<StoredEvent> = []
      for (const event of events) {
        const sequence = (state?.lastSequence ?? 0) + 1
        rows.push({
          id: generateId("sevt"),
          sessionId,
          turnNumber: turnNumberOf(event, state),
          sequence,
          type: event.type,
          payload: payloadOf(event),
          createdAt: at
        })
        state = apply(state, event, { sessionId, sequence, createdAt })
      }
      if (state === null || rows.length === 0) return yield* Effect.dieMessage("append needs at least one event")
      const after = state
      yield* sql.withTransaction(Effect.gen(function*() {
        if (before === null) {
          if (options.owner === undefined) return yield* Effect.dieMessage("creating a session needs its owner")
          yield* repo.insertSession(after, options.owner, at)
        } else {
          const updated = yield* repo.updateProjection(after, before.lastSequence, options.lease ?? { _tag: "keep" })
          if (!updated) return yield* new SessionConflict({ sessionId })
        }
        yield* repo.insertEvents(rows)
        if (checkpointDue(before, after)) yield* repo.insertCheckpoint(after, at)
        yield* publishWebhooks(after, rows)
      }))
      yield* notify(sessionId, rows)
      return { state: after, rows }
    })

  /** State from the latest checkpoint plus the events after it; None when the session never existed. */
  const load = (sessionId: string): Effect.Effect<Option.Option<SessionState>, SqlError> =>
    Effect.gen(function*() {
      const checkpoint = yield* repo.latestCheckpoint(sessionId)
      const from = Option.getOrNull(checkpoint)
      const tail = yield* repo.allEventsAfter(sessionId, from?.lastSequence ?? 0)
      return Option.fromNullable(rebuild(from, tail))
    })

  /** State from the whole log, ignoring checkpoints (for tests and the benchmark). */
  const replay = (sessionId: string): Effect.Effect<Option.Option<SessionState>, SqlError> =>
    repo.allEventsAfter(sessionId, 0).pipe(Effect.map((rows) => Option.fromNullable(rebuild(null, rows))))

  return { append, load, replay, subscribe, repo, now }
})

export type EventLog = Effect.Effect.Success<typeof makeEventLog>
