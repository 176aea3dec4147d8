/** Projects: the tenant boundary of the gateway. Creating one issues its first secret key and API key. */
import { Effect, Redacted } from "effect"
import { generateId } from "../../layers/crypto.ts"
import { ApiError } from "../../schemas/errors.ts"
import { Credentials } from "../auth/Service.ts"
import { makeProjectsRepo, type ProjectRow } from "./Repo.ts"

export interface Project {
  readonly id: string
  readonly name: string
  readonly markup_percentage: number
  readonly credit_gated: boolean
  readonly credit_balance_usd: number
  readonly created_at: string
}

const toProject = (row: ProjectRow): Project => ({
  id: row.id,
  name: row.name,
  markup_percentage: Number(row.markup_percentage),
  credit_gated: row.credit_gated,
  credit_balance_usd: Number(row.credit_balance_usd),
  created_at: row.created_at.toISOString()
})

export class Projects extends Effect.Service<Projects>()("Projects", {
  effect: Effect.gen(function*() {
    const repo = yield* makeProjectsRepo
    const credentials = yield* Credentials

    const create = (name: string) =>
      Effect.gen(function*() {
        const trimmed = name.trim()
        if (trimmed.length === 0 || trimmed.length > 200) {
          return yield* ApiError.badRequest("name must have 1 to 200 characters", { param: "name" })
        }
        return yield* repo.withTransaction(
          Effect.gen(function*() {
            const project = yield* repo.insert({ id: generateId("proj"), name: trimmed })
            const secret = yield* credentials.createKey(project.id, "secret", "default secret key")
            const api = yield* credentials.createKey(project.id, "api", "default API key")
            return { project: toProject(project), secretKey: secret.secret, apiKey: api.secret }
          })
        ).pipe(Effect.catchTag("SqlError", Effect.die))
      })

    return {
      create,
      get: (id: string) =>
        repo.findById(id).pipe(
          Effect.orDie,
          Effect.flatMap((row) => row ? Effect.succeed(toProject(row)) : Effect.fail(ApiError.notFound("Project")))
        ),
      list: repo.list.pipe(Effect.orDie, Effect.map((rows) => rows.map(toProject))),
      /** On the first start of an empty database: a default project whose keys are printed once. */
      bootstrap: Effect.gen(function*() {
        if ((yield* repo.count.pipe(Effect.orDie)) > 0) return undefined
        return yield* create("Default project")
      })
    }
  })
}) {}

export const revealKeys = (created: { readonly secretKey: Redacted.Redacted; readonly apiKey: Redacted.Redacted }) => ({
  secret_key: Redacted.value(created.secretKey),
  api_key: Redacted.value(created.apiKey)
})
