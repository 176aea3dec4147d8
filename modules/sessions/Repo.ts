/** SQL of sessions: the event log, its projection row (with the running turn's lease), and checkpoints. */
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import type { SessionStatus } from "../../schemas/sessions.ts"
import type { StoredEvent } from "./events.ts"
import type { SessionState } from "./state.ts"

/** The projection row of a session. */
export interface SessionRow {
  readonly id: string
  readonly project_id: string
  readonly tenant_id: string | null
  readonly external_user_id: string | null
  readonly agent_id: string | null
  readonly metadata: Readonly<Record<string, unknown>>
  readonly status: SessionStatus
  readonly turn_count: number
  readonly total_cost: string
  readonly last_sequence: number
  readonly created_at: Date
  readonly updated_at: Date
  readonly last_activity_at: Date
  readonly deleted_at: Date | null
  readonly turn_owner: string | null
  readonly turn_lease_until: Date | null
}

interface EventRow {
  readonly id: string
  readonly session_id: string
  readonly turn_number: number
  readonly sequence: number
  readonly event_type: string
  readonly payload: Readonly<Record<string, unknown>>
  readonly created_at: Date
}

const toStored = (row: EventRow): StoredEvent => ({
  id: row.id,
  sessionId: row.session_id,
  turnNumber: row.turn_number,
  sequence: row.sequence,
  type: row.event_type,
  payload: row.payload,
  createdAt: row.created_at
})

/** Who may see a session: the whole project, or (client tokens) one tenant and end user. */
export interface Owner {
  readonly projectId: string
  /** Set for `ect_` client tokens: only sessions they created. */
  readonly endUser: { readonly tenantId: string | null; readonly externalUserId: string | null } | null
}

/** What happens to the lease in an append: taken by `owner` until `until`, released, or left as it is. */
export type LeaseChange =
  | { readonly _tag: "acquire"; readonly owner: string; readonly until: Date }
  | { readonly _tag: "release" }
  | { readonly _tag: "keep" }

export const makeSessionsRepo = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const ownerFilter = (owner: Owner) =>
    owner.endUser === null
      ? sql`project_id = ${owner.projectId}`
      : sql`project_id = ${owner.projectId}
          AND tenant_id IS NOT DISTINCT FROM ${owner.endUser.tenantId}
          AND external_user_id IS NOT DISTINCT FROM ${owner.endUser.externalUserId}`

  return {
    insertEvents: (rows: ReadonlyArray<StoredEvent>) =>
      sql`INSERT INTO session_events ${
        sql.insert(rows.map((row) => ({
          id: row.id,
          session_id: row.sessionId,
          turn_number: row.turnNumber,
          sequence: row.sequence,
          event_type: row.type,
          payload: JSON.stringify(row.payload),
          created_at: row.createdAt
        })))
      }`.pipe(Effect.asVoid),

    insertSession: (state: SessionState, owner: Owner, at: Date) =>
      sql`INSERT INTO sessions ${
        sql.insert({
          id: state.id,
          project_id: owner.projectId,
          tenant_id: owner.endUser?.tenantId ?? null,
          external_user_id: owner.endUser?.externalUserId ?? null,
          agent_id: state.agentId,
          metadata: JSON.stringify(state.metadata),
          status: state.status,
          turn_count: state.turnCount,
          total_cost: state.totalCost,
          last_sequence: state.lastSequence,
          created_at: at,
          updated_at: at,
          last_activity_at: at
        })
      }`.pipe(Effect.asVoid),

    /**
     * Writes the projection of `state` if the row is still at `expectedSequence` (optimistic concurrency: any
     * other append in between makes this one fail). Returns whether the row was updated.
     */
    updateProjection: (state: SessionState, expectedSequence: number, lease: LeaseChange) => {
      const leaseSet = lease._tag === "acquire"
        ? sql`, turn_owner = ${lease.owner}, turn_lease_until = ${lease.until}`
        : lease._tag === "release"
        ? sql`, turn_owner = NULL, turn_lease_until = NULL`
        : sql``
      return sql<{ readonly id: string }>`
        UPDATE sessions SET
          status = ${state.status},
          turn_count = ${state.turnCount},
          total_cost = ${state.totalCost},
          last_sequence = ${state.lastSequence},
          updated_at = ${new Date(state.updatedAt)},
          last_activity_at = ${new Date(state.lastActivityAt)},
          deleted_at = ${state.deleted ? new Date(state.updatedAt) : null}
          ${leaseSet}
        WHERE id = ${state.id} AND last_sequence = ${expectedSequence}
        RETURNING id`.pipe(Effect.map((rows) => rows.length === 1))
    },

    insertCheckpoint: (state: SessionState, at: Date) =>
      sql`INSERT INTO session_checkpoints ${
        sql.insert({
          session_id: state.id,
          sequence: state.lastSequence,
          turn_count: state.turnCount,
          state: JSON.stringify(state),
          created_at: at
        })
      } ON CONFLICT DO NOTHING`.pipe(Effect.asVoid),

    latestCheckpoint: (sessionId: string) =>
      sql<{ readonly sequence: number; readonly state: SessionState }>`
        SELECT sequence, state FROM session_checkpoints WHERE session_id = ${sessionId}
        ORDER BY sequence DESC LIMIT 1`.pipe(Effect.map((rows) => Option.fromNullable(rows[0]?.state))),

    /** Events after `sequence`, oldest first. */
    eventsAfter: (sessionId: string, sequence: number, limit: number) =>
      sql<EventRow>`
        SELECT * FROM session_events WHERE session_id = ${sessionId} AND sequence > ${sequence}
        ORDER BY sequence LIMIT ${limit}`.pipe(Effect.map((rows) => rows.map(toStored))),

    /** Every event after `sequence` (a rebuild's tail). */
    allEventsAfter: (sessionId: string, sequence: number) =>
      sql<EventRow>`
        SELECT * FROM session_events WHERE session_id = ${sessionId} AND sequence > ${sequence}
        ORDER BY sequence`.pipe(Effect.map((rows) => rows.map(toStored))),

    find: (sessionId: string) =>
      sql<SessionRow>`SELECT * FROM sessions WHERE id = ${sessionId}`.pipe(
        Effect.map((rows) => Option.fromNullable(rows[0]))
      ),

    /** A visible (not deleted) session of `owner`. */
    findOwned: (sessionId: string, owner: Owner) =>
      sql<SessionRow>`
        SELECT * FROM sessions WHERE id = ${sessionId} AND deleted_at IS NULL AND ${ownerFilter(owner)}`.pipe(
        Effect.map((rows) => Option.fromNullable(rows[0]))
      ),

    list: (owner: Owner, status: SessionStatus | undefined, limit: number, offset: number) => {
      const statusFilter = status === undefined ? sql`` : sql`AND status = ${status}`
      return Effect.all({
        rows: sql<SessionRow>`
          SELECT * FROM sessions WHERE deleted_at IS NULL AND ${ownerFilter(owner)} ${statusFilter}
          ORDER BY created_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`,
        total: sql<{ readonly total: number }>`
          SELECT count(*)::int AS total FROM sessions
          WHERE deleted_at IS NULL AND ${ownerFilter(owner)} ${statusFilter}`.pipe(
          Effect.map((rows) => rows[0]?.total ?? 0)
        )
      })
    },

    eventsPage: (sessionId: string, turnNumber: number | undefined, limit: number, offset: number) => {
      const turnFilter = turnNumber === undefined ? sql`` : sql`AND turn_number = ${turnNumber}`
      return Effect.all({
        rows: sql<EventRow>`
          SELECT * FROM session_events WHERE session_id = ${sessionId} ${turnFilter}
          ORDER BY sequence LIMIT ${limit} OFFSET ${offset}`.pipe(Effect.map((rows) => rows.map(toStored))),
        total: sql<{ readonly total: number }>`
          SELECT count(*)::int AS total FROM session_events WHERE session_id = ${sessionId} ${turnFilter}`.pipe(
          Effect.map((rows) => rows[0]?.total ?? 0)
        )
      })
    },

    /** Extends the lease while `owner` holds it; false when it was lost (the turn was failed by a sweep). */
    renewLease: (sessionId: string, owner: string, until: Date) =>
      sql<{ readonly id: string }>`
        UPDATE sessions SET turn_lease_until = ${until}
        WHERE id = ${sessionId} AND turn_owner = ${owner} RETURNING id`.pipe(Effect.map((rows) => rows.length === 1)),

    /** Sessions whose running turn's lease ran out: its process died or hung. */
    expiredLeases: (now: Date, limit: number) =>
      sql<{ readonly id: string; readonly turn_owner: string }>`
        SELECT id, turn_owner FROM sessions WHERE turn_owner IS NOT NULL AND turn_lease_until < ${now}
        ORDER BY turn_lease_until LIMIT ${limit}`,

    /** Open sessions without activity since `cutoff` and no running turn. */
    idleSince: (cutoff: Date, limit: number) =>
      sql<{ readonly id: string }>`
        SELECT id FROM sessions
        WHERE deleted_at IS NULL AND status <> 'completed' AND turn_owner IS NULL AND last_activity_at <= ${cutoff}
        ORDER BY last_activity_at LIMIT ${limit}`.pipe(Effect.map((rows) => rows.map((row) => row.id)))
  }
})

export type SessionsRepo = Effect.Effect.Success<typeof makeSessionsRepo>
