import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Custom providers (contract §4.5) and their models. The API key is stored encrypted (SecretBox). */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE custom_providers (
      id text PRIMARY KEY,
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      name text NOT NULL,
      base_url text NOT NULL,
      api_format text NOT NULL CHECK (api_format IN ('openai', 'anthropic')),
      api_key_encrypted text,
      is_active boolean NOT NULL DEFAULT true,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE UNIQUE INDEX custom_providers_project_name ON custom_providers (project_id, lower(name))`
  yield* sql`CREATE INDEX custom_providers_project_created ON custom_providers (project_id, created_at DESC)`
  yield* sql`
    CREATE TABLE custom_models (
      id text PRIMARY KEY,
      provider_id text NOT NULL REFERENCES custom_providers(id) ON DELETE CASCADE,
      model_name text NOT NULL,
      display_name text NOT NULL,
      is_active boolean NOT NULL DEFAULT true,
      position integer NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX custom_models_provider ON custom_models (provider_id, position)`
})
