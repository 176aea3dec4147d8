import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** BYOK provider connections (contract §2.3), the models synced from them, and the sync log. */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE provider_connections (
      id text PRIMARY KEY,
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      name text NOT NULL,
      provider text NOT NULL,
      api_format text NOT NULL,
      base_url text,
      api_key_encrypted text NOT NULL,
      status text NOT NULL DEFAULT 'active',
      last_tested_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX provider_connections_project ON provider_connections (project_id, provider, created_at DESC)`
  yield* sql`
    CREATE TABLE provider_models (
      connection_id text NOT NULL REFERENCES provider_connections(id) ON DELETE CASCADE,
      model_id text NOT NULL,
      name text NOT NULL,
      owned_by text,
      created bigint NOT NULL DEFAULT 0,
      synced_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (connection_id, model_id)
    )`
  yield* sql`
    CREATE TABLE provider_model_syncs (
      id text PRIMARY KEY,
      connection_id text NOT NULL REFERENCES provider_connections(id) ON DELETE CASCADE,
      status text NOT NULL,
      counts jsonb NOT NULL DEFAULT '{}'::jsonb,
      changes jsonb NOT NULL DEFAULT '[]'::jsonb,
      error text,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX provider_model_syncs_connection ON provider_model_syncs (connection_id, created_at DESC)`
})
