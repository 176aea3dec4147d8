import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** The domain event outbox: one row per published event, written in the transaction of the change it reports. */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE domain_events (
      id text PRIMARY KEY,
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      type text NOT NULL,
      data jsonb NOT NULL,
      created_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX domain_events_project ON domain_events (project_id, created_at DESC, id DESC)`
})
