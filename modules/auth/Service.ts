/**
 * Credentials: project keys (`csk_` secret keys and `sak_` API keys), `ect_` client tokens, dashboard users and
 * their session cookies. Every credential is random (256 bits), shown once, and stored as a SHA-256 digest;
 * passwords are stored as scrypt hashes. Lookups go by digest, and the digest is compared in constant time.
 */
import { Clock, type Context, Effect, Redacted } from "effect"
import {
  constantTimeEqual,
  generateId,
  generateSecret,
  hashPassword,
  hashSecret,
  displayPrefix,
  verifyPassword
} from "../../layers/crypto.ts"
import { AppConfig } from "../../layers/config.ts"
import { makeLookupCache } from "../../layers/lookup-cache.ts"
import { ApiError } from "../../schemas/errors.ts"
import { makeAuthRepo, type KeyRow } from "./Repo.ts"
import type { CurrentProject, CurrentUser } from "./Principal.ts"

export const KEY_PREFIX = { secret: "csk_", api: "sak_", client: "ect_", session: "ds_" } as const

export interface ProjectKey {
  readonly id: string
  readonly project_id: string
  readonly kind: "secret" | "api"
  readonly name: string
  readonly key_prefix: string
  readonly created_at: string
  readonly revoked_at: string | null
}

const toProjectKey = (row: KeyRow): ProjectKey => ({
  id: row.id,
  project_id: row.project_id,
  kind: row.kind,
  name: row.name,
  key_prefix: row.key_prefix,
  created_at: row.created_at.toISOString(),
  revoked_at: row.revoked_at?.toISOString() ?? null
})

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

/** A stored digest that matches a presented secret; the digest was found by index, then compared again. */
const matches = (presented: string, stored: Uint8Array) => constantTimeEqual(hashSecret(presented), stored)

export class Credentials extends Effect.Service<Credentials>()("Credentials", {
  effect: Effect.gen(function*() {
    const repo = yield* makeAuthRepo
    const config = yield* AppConfig
    const unauthorized = ApiError.unauthorized()
    // Verified when an email is unknown, so unknown emails cost the same time as wrong passwords.
    const dummyPasswordHash = yield* Effect.cached(hashPassword(generateSecret("")))

    const keys = yield* makeLookupCache((digest: string) =>
      repo.findKeyByHash(Buffer.from(digest, "hex")).pipe(Effect.orDie)
    )
    const clientTokens = yield* makeLookupCache((digest: string) =>
      repo.findClientTokenByHash(Buffer.from(digest, "hex")).pipe(Effect.orDie)
    )

    const lookupKey = (token: string, kind: "secret" | "api") =>
      Effect.gen(function*() {
        if (!token.startsWith(KEY_PREFIX[kind])) return yield* unauthorized
        const row = yield* keys.get(hashSecret(token).toString("hex"))
        if (!row || row.kind !== kind || row.revoked_at !== null || !matches(token, row.key_hash)) {
          return yield* unauthorized
        }
        return {
          projectId: row.project_id,
          credential: kind,
          credentialId: row.id,
          tenantId: null,
          externalUserId: null
        } satisfies Context.Tag.Service<typeof CurrentProject>
      })

    const createKey = (projectId: string, kind: "secret" | "api", name: string) =>
      Effect.gen(function*() {
        const key = generateSecret(KEY_PREFIX[kind])
        const row = yield* repo.insertKey({
          id: generateId("key"),
          project_id: projectId,
          kind,
          name,
          key_prefix: displayPrefix(key),
          key_hash: hashSecret(key)
        }).pipe(Effect.orDie)
        return { key: toProjectKey(row), secret: Redacted.make(key) }
      })

    return {
      createKey,

      listKeys: (projectId: string) => repo.listKeys(projectId).pipe(Effect.orDie, Effect.map((rows) => rows.map(toProjectKey))),

      revokeKey: (projectId: string, keyId: string) =>
        repo.revokeKey(projectId, keyId).pipe(
          Effect.orDie,
          Effect.tap(() => keys.invalidateAll),
          Effect.flatMap((row) => row ? Effect.succeed(toProjectKey(row)) : Effect.fail(ApiError.notFound("Key")))
        ),

      authenticateSecretKey: (token: Redacted.Redacted) => lookupKey(Redacted.value(token), "secret"),

      authenticateApiKey: (token: Redacted.Redacted) => lookupKey(Redacted.value(token), "api"),

      authenticateClientToken: (token: Redacted.Redacted) =>
        Effect.gen(function*() {
          const value = Redacted.value(token)
          if (!value.startsWith(KEY_PREFIX.client)) return yield* unauthorized
          const row = yield* clientTokens.get(hashSecret(value).toString("hex"))
          const at = yield* now
          if (!row || row.expires_at <= at || !matches(value, row.token_hash)) return yield* unauthorized
          return {
            projectId: row.project_id,
            credential: "client" as const,
            credentialId: row.id,
            tenantId: row.tenant_id,
            externalUserId: row.external_user_id
          }
        }),

      issueClientToken: (
        projectId: string,
        options: { readonly tenantId: string | null; readonly externalUserId: string | null; readonly ttlSeconds: number }
      ) =>
        Effect.gen(function*() {
          const token = generateSecret(KEY_PREFIX.client)
          const expiresAt = new Date((yield* Clock.currentTimeMillis) + options.ttlSeconds * 1000)
          yield* repo.insertClientToken({
            id: generateId("ct"),
            project_id: projectId,
            token_hash: hashSecret(token),
            tenant_id: options.tenantId,
            external_user_id: options.externalUserId,
            expires_at: expiresAt
          }).pipe(Effect.orDie)
          return { token, expires_at: expiresAt.toISOString() }
        }),

      createUser: (email: string, password: string, projectId: string) =>
        Effect.gen(function*() {
          const normalized = email.trim().toLowerCase()
          if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(normalized)) {
            return yield* ApiError.badRequest("email is not a valid address", { param: "email" })
          }
          if (password.length < 8) {
            return yield* ApiError.badRequest("password must have at least 8 characters", { param: "password" })
          }
          const existing = yield* repo.findUserByEmail(normalized).pipe(Effect.orDie)
          const user = existing ?? (yield* repo.insertUser({
            id: generateId("usr"),
            email: normalized,
            password_hash: yield* hashPassword(password)
          }).pipe(Effect.orDie))
          yield* repo.addMember(projectId, user.id).pipe(Effect.orDie)
          return { id: user.id, email: user.email, created: existing === undefined }
        }),

      /** Checks the password and opens a dashboard session; returns the cookie value (shown once). */
      login: (email: string, password: string) =>
        Effect.gen(function*() {
          const user = yield* repo.findUserByEmail(email.trim().toLowerCase()).pipe(Effect.orDie)
          const valid = yield* verifyPassword(password, user?.password_hash ?? (yield* dummyPasswordHash))
          if (!user || !valid) return yield* ApiError.unauthorized("Invalid email or password")
          const token = generateSecret(KEY_PREFIX.session)
          const expiresAt = new Date((yield* Clock.currentTimeMillis) + config.dashboardSessionTtlSeconds * 1000)
          yield* repo.insertSession({
            id: generateId("ses"),
            token_hash: hashSecret(token),
            user_id: user.id,
            expires_at: expiresAt
          }).pipe(Effect.orDie)
          return { token: Redacted.make(token), expiresAt, user: { id: user.id, email: user.email } }
        }),

      authenticateSession: (cookie: Redacted.Redacted) =>
        Effect.gen(function*() {
          const value = Redacted.value(cookie)
          if (!value.startsWith(KEY_PREFIX.session)) return yield* ApiError.unauthorized("Not signed in")
          const row = yield* repo.findSessionByHash(hashSecret(value)).pipe(Effect.orDie)
          const at = yield* now
          if (!row || row.expires_at <= at || !matches(value, row.token_hash)) {
            return yield* ApiError.unauthorized("Not signed in")
          }
          return { userId: row.user_id, email: row.email, sessionId: row.id } satisfies Context.Tag.Service<
            typeof CurrentUser
          >
        }),

      logout: (sessionId: string) => repo.deleteSession(sessionId).pipe(Effect.orDie, Effect.asVoid),

      projectsOfUser: (userId: string) => repo.projectsOfUser(userId).pipe(Effect.orDie),

      /** Fails with 404 (never 403) when the user is not a member, so other projects' ids reveal nothing. */
      requireMember: (projectId: string, userId: string) =>
        repo.isMember(projectId, userId).pipe(
          Effect.orDie,
          Effect.flatMap((member) => member ? Effect.void : Effect.fail(ApiError.notFound("Project")))
        )
    }
  })
}) {}
