import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Projects, their credentials, and dashboard users. */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE projects (
      id text PRIMARY KEY,
      name text NOT NULL,
      markup_percentage numeric(8, 4) NOT NULL DEFAULT 0,
      credit_gated boolean NOT NULL DEFAULT false,
      credit_balance_usd numeric(18, 8) NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`
    CREATE TABLE project_keys (
      id text PRIMARY KEY,
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      kind text NOT NULL CHECK (kind IN ('secret', 'api')),
      name text NOT NULL,
      key_prefix text NOT NULL,
      key_hash bytea NOT NULL UNIQUE,
      created_at timestamptz NOT NULL DEFAULT now(),
      last_used_at timestamptz,
      revoked_at timestamptz
    )`
  yield* sql`CREATE INDEX project_keys_project ON project_keys (project_id, created_at)`
  yield* sql`
    CREATE TABLE client_tokens (
      id text PRIMARY KEY,
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      token_hash bytea NOT NULL UNIQUE,
      tenant_id text,
      external_user_id text,
      expires_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`
    CREATE TABLE users (
      id text PRIMARY KEY,
      email text NOT NULL UNIQUE,
      password_hash text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`
    CREATE TABLE project_members (
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      role text NOT NULL DEFAULT 'owner',
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (project_id, user_id)
    )`
  yield* sql`
    CREATE TABLE dashboard_sessions (
      id text PRIMARY KEY,
      token_hash bytea NOT NULL UNIQUE,
      user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      expires_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
})
