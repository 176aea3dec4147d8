import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Usage rows: one per billable call (chat, vision, speech, transcription). */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE usage_events (
      id text PRIMARY KEY,
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      tenant_id text,
      agent_id text,
      session_id text,
      request_id text,
      kind text NOT NULL,
      model text NOT NULL,
      provider text NOT NULL,
      key_source text NOT NULL CHECK (key_source IN ('managed', 'byok', 'custom', 'local')),
      prompt_tokens integer NOT NULL DEFAULT 0,
      completion_tokens integer NOT NULL DEFAULT 0,
      cached_tokens integer NOT NULL DEFAULT 0,
      characters integer,
      audio_seconds numeric(12, 3),
      images integer,
      provider_cost_usd numeric(18, 8),
      service_charge_usd numeric(18, 8) NOT NULL DEFAULT 0,
      markup_percentage numeric(8, 4) NOT NULL DEFAULT 0,
      pricing_status text NOT NULL,
      latency_ms integer NOT NULL,
      ttft_ms integer,
      status text NOT NULL CHECK (status IN ('succeeded', 'failed', 'cancelled')),
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX usage_events_project ON usage_events (project_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX usage_events_session ON usage_events (session_id) WHERE session_id IS NOT NULL`
})
