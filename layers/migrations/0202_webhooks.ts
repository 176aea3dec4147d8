import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Webhook endpoints (subscriptions), their deliveries, and every attempt of each delivery. */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE webhook_endpoints (
      id text PRIMARY KEY,
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      url text NOT NULL,
      events text[] NOT NULL,
      description text,
      enabled boolean NOT NULL DEFAULT true,
      secret_ciphertext text NOT NULL,
      failure_reason text,
      failed_at timestamptz,
      last_error text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX webhook_endpoints_project ON webhook_endpoints (project_id, created_at DESC, id DESC)`
  yield* sql`
    CREATE TABLE webhook_deliveries (
      id text PRIMARY KEY,
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      endpoint_id text NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
      event_id text NOT NULL,
      event_type text NOT NULL,
      event_data text NOT NULL,
      occurred_at timestamptz NOT NULL,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
      attempt_count integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz,
      deadline_at timestamptz NOT NULL,
      replay_of text,
      last_error text,
      created_at timestamptz NOT NULL,
      completed_at timestamptz
    )`
  yield* sql`CREATE INDEX webhook_deliveries_project ON webhook_deliveries (project_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id)`
  yield* sql`
    CREATE TABLE webhook_delivery_attempts (
      delivery_id text NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
      attempt integer NOT NULL,
      attempted_at timestamptz NOT NULL,
      status_code integer,
      latency_ms integer,
      error text,
      response_snippet text,
      PRIMARY KEY (delivery_id, attempt)
    )`
})
