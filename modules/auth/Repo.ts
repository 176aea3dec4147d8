/** SQL for credentials: project keys, client tokens, users, memberships and dashboard sessions. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export type KeyRow = {
  readonly id: string
  readonly project_id: string
  readonly kind: "secret" | "api"
  readonly name: string
  readonly key_prefix: string
  readonly key_hash: Uint8Array
  readonly created_at: Date
  readonly revoked_at: Date | null
}

export type ClientTokenRow = {
  readonly id: string
  readonly project_id: string
  readonly token_hash: Uint8Array
  readonly tenant_id: string | null
  readonly external_user_id: string | null
  readonly expires_at: Date
}

export type UserRow = {
  readonly id: string
  readonly email: string
  readonly password_hash: string
  readonly created_at: Date
}

export type SessionRow = {
  readonly id: string
  readonly token_hash: Uint8Array
  readonly user_id: string
  readonly email: string
  readonly expires_at: Date
}

export const makeAuthRepo = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return {
    insertKey: (row: Omit<KeyRow, "created_at" | "revoked_at">) =>
      sql<KeyRow>`INSERT INTO project_keys ${sql.insert(row)} RETURNING *`.pipe(Effect.map((rows) => rows[0]!)),

    findKeyByHash: (hash: Uint8Array) =>
      sql<KeyRow>`SELECT * FROM project_keys WHERE key_hash = ${hash}`.pipe(Effect.map((rows) => rows[0])),

    listKeys: (projectId: string) =>
      sql<KeyRow>`
        SELECT * FROM project_keys WHERE project_id = ${projectId} ORDER BY created_at, id`,

    revokeKey: (projectId: string, keyId: string) =>
      sql<KeyRow>`
        UPDATE project_keys SET revoked_at = coalesce(revoked_at, now())
        WHERE project_id = ${projectId} AND id = ${keyId}
        RETURNING *`.pipe(Effect.map((rows) => rows[0])),

    insertClientToken: (row: ClientTokenRow) =>
      sql`INSERT INTO client_tokens ${sql.insert(row)}`,

    findClientTokenByHash: (hash: Uint8Array) =>
      sql<ClientTokenRow>`SELECT * FROM client_tokens WHERE token_hash = ${hash}`.pipe(
        Effect.map((rows) => rows[0])
      ),

    insertUser: (row: Omit<UserRow, "created_at">) =>
      sql<UserRow>`INSERT INTO users ${sql.insert(row)} RETURNING *`.pipe(Effect.map((rows) => rows[0]!)),

    findUserByEmail: (email: string) =>
      sql<UserRow>`SELECT * FROM users WHERE email = ${email}`.pipe(Effect.map((rows) => rows[0])),

    addMember: (projectId: string, userId: string) =>
      sql`
        INSERT INTO project_members (project_id, user_id) VALUES (${projectId}, ${userId})
        ON CONFLICT DO NOTHING`,

    isMember: (projectId: string, userId: string) =>
      sql<{ readonly found: number }>`
        SELECT 1 AS found FROM project_members WHERE project_id = ${projectId} AND user_id = ${userId}`.pipe(
        Effect.map((rows) => rows.length > 0)
      ),

    projectsOfUser: (userId: string) =>
      sql<{ readonly id: string; readonly name: string }>`
        SELECT p.id, p.name FROM projects p JOIN project_members m ON m.project_id = p.id
        WHERE m.user_id = ${userId} ORDER BY p.created_at, p.id`,

    insertSession: (row: { id: string; token_hash: Uint8Array; user_id: string; expires_at: Date }) =>
      sql`INSERT INTO dashboard_sessions ${sql.insert(row)}`,

    findSessionByHash: (hash: Uint8Array) =>
      sql<SessionRow>`
        SELECT s.id, s.token_hash, s.user_id, u.email, s.expires_at
        FROM dashboard_sessions s JOIN users u ON u.id = s.user_id
        WHERE s.token_hash = ${hash}`.pipe(Effect.map((rows) => rows[0])),

    deleteSession: (id: string) => sql`DELETE FROM dashboard_sessions WHERE id = ${id}`
  }
})
