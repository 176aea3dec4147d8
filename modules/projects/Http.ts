/** Handlers of the projects groups: decode, call the service, shape the answer. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Redacted } from "effect"
import { AppConfig } from "../../layers/config.ts"
import { GatewayApi } from "../../layers/http/api.ts"
import { CurrentProject, CurrentUser } from "../auth/Principal.ts"
import { Credentials, type ProjectKey } from "../auth/Service.ts"
import { ApiError } from "../../schemas/errors.ts"
import { Projects } from "./Service.ts"

const toApiKey = (key: ProjectKey) => ({
  id: key.id,
  object: "api_key" as const,
  name: key.name,
  key_prefix: key.key_prefix,
  created_at: key.created_at,
  revoked_at: key.revoked_at
})

export const ProjectsHttpLive = HttpApiBuilder.group(GatewayApi, "projects", (handlers) =>
  Effect.gen(function*() {
    const credentials = yield* Credentials
    const config = yield* AppConfig
    return handlers
      .handle("createClientToken", ({ payload }) =>
        Effect.flatMap(CurrentProject, (project) =>
          credentials.issueClientToken(project.projectId, {
            tenantId: payload.tenant_id ?? null,
            externalUserId: payload.external_user_id ?? null,
            ttlSeconds: payload.expires_in ?? config.clientTokenTtlSeconds
          })))
      .handle("listApiKeys", () =>
        Effect.gen(function*() {
          const project = yield* CurrentProject
          const keys = yield* credentials.listKeys(project.projectId)
          return { data: keys.filter((key) => key.kind === "api").map(toApiKey), next_cursor: null }
        }))
      .handle("createApiKey", ({ payload }) =>
        Effect.gen(function*() {
          const project = yield* CurrentProject
          const created = yield* credentials.createKey(project.projectId, "api", payload.name ?? "API key")
          return { ...toApiKey(created.key), key: Redacted.value(created.secret) }
        }))
      .handle("revokeApiKey", ({ path }) =>
        Effect.gen(function*() {
          const project = yield* CurrentProject
          const keys = yield* credentials.listKeys(project.projectId)
          // Only API keys are revocable here; a secret key id answers 404 like any unknown id.
          if (!keys.some((key) => key.id === path.id && key.kind === "api")) {
            return yield* ApiError.notFound("API key")
          }
          yield* credentials.revokeKey(project.projectId, path.id)
          return { id: path.id, deleted: true, status: "revoked" }
        }))
  }))

export const DashboardProjectsHttpLive = HttpApiBuilder.group(GatewayApi, "dashboardProjects", (handlers) =>
  Effect.gen(function*() {
    const credentials = yield* Credentials
    const projects = yield* Projects
    return handlers.handle("getProject", ({ path }) =>
      Effect.gen(function*() {
        const user = yield* CurrentUser
        yield* credentials.requireMember(path.projectId, user.userId)
        const project = yield* projects.get(path.projectId)
        return { project: { id: project.id, name: project.name, created_at: project.created_at } }
      }))
  }))

export const WhoAmIHttpLive = HttpApiBuilder.group(GatewayApi, "whoami", (handlers) =>
  Effect.gen(function*() {
    const projects = yield* Projects
    return handlers.handle("currentProject", () =>
      Effect.gen(function*() {
        const caller = yield* CurrentProject
        const project = yield* projects.get(caller.projectId)
        return {
          id: project.id,
          object: "project" as const,
          name: project.name,
          credential: caller.credential,
          tenant_id: caller.tenantId,
          external_user_id: caller.externalUserId
        }
      }))
  }))
