import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Durable sessions (docs/sessions.md). `session_events` is the append-only log and the source of truth;
 * `sessions` is its projection (kept in the same transaction as each append) plus the running turn's lease;
 * `session_checkpoints` holds the folded state every 50 turns so a rebuild reads only the tail.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE sessions (
      id text PRIMARY KEY,
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      tenant_id text,
      external_user_id text,
      agent_id text,
      metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
      status text NOT NULL CHECK (status IN ('active', 'paused', 'completed')),
      turn_count integer NOT NULL DEFAULT 0,
      total_cost numeric(18, 8) NOT NULL DEFAULT 0,
      last_sequence integer NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      last_activity_at timestamptz NOT NULL,
      deleted_at timestamptz,
      turn_owner text,
      turn_lease_until timestamptz
    )`
  yield* sql`CREATE INDEX sessions_project ON sessions (project_id, created_at DESC, id DESC) WHERE deleted_at IS NULL`
  yield* sql`CREATE INDEX sessions_idle ON sessions (last_activity_at) WHERE deleted_at IS NULL AND status <> 'completed'`
  yield* sql`CREATE INDEX sessions_leases ON sessions (turn_lease_until) WHERE turn_owner IS NOT NULL`
  yield* sql`
    CREATE TABLE session_events (
      id text PRIMARY KEY,
      session_id text NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
      turn_number integer NOT NULL,
      sequence integer NOT NULL,
      event_type text NOT NULL,
      payload jsonb NOT NULL,
      created_at timestamptz NOT NULL,
      CONSTRAINT session_events_sequence UNIQUE (session_id, sequence)
    )`
  yield* sql`CREATE INDEX session_events_turn ON session_events (session_id, turn_number, sequence)`
  yield* sql`
    CREATE TABLE session_checkpoints (
      session_id text NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
      sequence integer NOT NULL,
      turn_count integer NOT NULL,
      state jsonb NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (session_id, sequence)
    )`
})
