/**
 * Following a session's log: replay from a sequence, then follow live events until the turn in flight ends.
 * Every event comes from the log in sequence order (in-process notifications only bring committed events
 * sooner; a gap sends the follower back to the database), so a reconnecting client sees no gap and no duplicate.
 */
import type { SqlError } from "@effect/sql/SqlError"
import { Chunk, Duration, Effect, Option, Queue, Schedule, Stream } from "effect"
import { STREAMED, type StoredEvent } from "./events.ts"
import type { EventLog } from "./EventLog.ts"

const PAGE = 500

/** After these the turn (or the session) is over: a stream following it ends. */
const TERMINAL: ReadonlySet<string> = new Set(["turn.completed", "turn.failed", "session.completed", "session.deleted"])

/**
 * Events of `sessionId` after sequence `after`. Ends after a terminal event, or once caught up while no turn is
 * running (no lease holder): a paused turn, an idle session, or a turn that ended.
 */
export const follow = (
  log: EventLog,
  sessionId: string,
  after: number,
  pollMs: number
): Stream.Stream<StoredEvent, SqlError> =>
  Stream.unwrapScoped(Effect.gen(function*() {
    const subscription = yield* log.subscribe(sessionId)
    let cursor = after
    let fromDatabase = true
    let done = false

    const idleAt = (sequence: number) =>
      log.repo.find(sessionId).pipe(
        Effect.map(Option.match({
          onNone: () => true,
          onSome: (row) => row.deleted_at !== null || (row.turn_owner === null && sequence >= row.last_sequence)
        }))
      )

    const emit = (rows: ReadonlyArray<StoredEvent>) => {
      cursor = rows[rows.length - 1]!.sequence
      if (rows.some((row) => TERMINAL.has(row.type))) done = true
      return Chunk.fromIterable(rows)
    }

    const nextLive = Queue.take(subscription).pipe(
      Effect.map(Option.some),
      Effect.race(Effect.sleep(Duration.millis(pollMs)).pipe(Effect.as(Option.none())))
    )

    const next: Effect.Effect<Option.Option<Chunk.Chunk<StoredEvent>>, SqlError> = Effect.gen(function*() {
      while (!done) {
        if (fromDatabase) {
          // Read the lease before the events: when no turn holds it, what we read is all there will be.
          const idleBefore = yield* log.repo.find(sessionId).pipe(
            Effect.map(Option.map((row) => ({ free: row.deleted_at !== null || row.turn_owner === null, last: row.last_sequence })))
          )
          const rows = yield* log.repo.eventsAfter(sessionId, cursor, PAGE)
          if (rows.length < PAGE) fromDatabase = false
          const last = rows.length > 0 ? rows[rows.length - 1]!.sequence : cursor
          const caughtUp = Option.match(idleBefore, { onNone: () => true, onSome: (row) => row.free && last >= row.last })
          if (rows.length < PAGE && caughtUp) done = true
          if (rows.length > 0) return Option.some(emit(rows))
          continue
        }
        const live = yield* nextLive
        if (Option.isNone(live)) {
          fromDatabase = true
          continue
        }
        const fresh = live.value.filter((row) => row.sequence > cursor)
        if (fresh.length === 0) continue
        if (fresh[0]!.sequence !== cursor + 1) {
          fromDatabase = true
          continue
        }
        const chunk = emit(fresh)
        // A pause ends the model call: check whether the turn still runs once these are out.
        if (!done && fresh[fresh.length - 1]!.type === "turn.paused" && (yield* idleAt(cursor))) done = true
        return Option.some(chunk)
      }
      return Option.none()
    })

    const pull: Effect.Effect<Chunk.Chunk<StoredEvent>, Option.Option<SqlError>> = next.pipe(
      Effect.mapError(Option.some),
      Effect.flatMap(Option.match({ onNone: () => Effect.fail(Option.none()), onSome: Effect.succeed }))
    )

    return Stream.repeatEffectChunkOption(pull)
  }))

/** One SSE message: `id:` (the sequence), `event:` (the type) and `data:` (the payload). */
export const sseMessage = (row: StoredEvent): string =>
  `id: ${row.sequence}\nevent: ${row.type}\ndata: ${JSON.stringify(row.payload)}\n\n`

const KEEP_ALIVE = ": keep-alive\n\n"

/** The SSE body of a follower: the streamed event types only, with keep-alive comments while idle. */
export const sseBody = (events: Stream.Stream<StoredEvent, SqlError>): Stream.Stream<Uint8Array> =>
  events.pipe(
    Stream.filter((row) => STREAMED.has(row.type)),
    Stream.map(sseMessage),
    Stream.catchAllCause((cause) => Stream.fromEffect(Effect.logError("session stream failed", cause)).pipe(Stream.drain)),
    Stream.merge(Stream.fromSchedule(Schedule.spaced(Duration.seconds(15))).pipe(Stream.as(KEEP_ALIVE)), {
      haltStrategy: "left"
    }),
    Stream.encodeText
  )
