import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The durable job queue. A job is `pending` until `run_at`, `running` while a worker holds its lease
 * (`locked_until`, fenced by `lease_token`), and `dead` when it gave up. Finished jobs are deleted: the module
 * that owns a job kind keeps its own record of the outcome.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE jobs (
      id text PRIMARY KEY,
      kind text NOT NULL,
      payload jsonb NOT NULL,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'running', 'dead')),
      attempts integer NOT NULL DEFAULT 0,
      max_attempts integer NOT NULL,
      run_at timestamptz NOT NULL,
      locked_until timestamptz,
      lease_token text,
      unique_key text,
      last_error text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX jobs_due ON jobs (run_at) WHERE status = 'pending'`
  yield* sql`CREATE INDEX jobs_leased ON jobs (locked_until) WHERE status = 'running'`
  yield* sql`
    CREATE UNIQUE INDEX jobs_unique_key ON jobs (kind, unique_key)
    WHERE unique_key IS NOT NULL AND status <> 'dead'`
})
