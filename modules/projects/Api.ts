/**
 * Project credentials over HTTP: client tokens (§2.2 ClientToken, issued with the secret key), API keys, and the
 * dashboard's view of a project.
 */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { ClientToken, DeletedResponse } from "../../schemas/common.ts"
import { errorResponse } from "../../schemas/errors.ts"
import { AnyProjectAuth, DashboardAuth, SecretKeyAuth } from "../auth/Api.ts"

export const ClientTokenRequest = Schema.Struct({
  tenant_id: Schema.optional(Schema.NullOr(Schema.String.pipe(Schema.maxLength(200)))),
  external_user_id: Schema.optional(Schema.NullOr(Schema.String.pipe(Schema.maxLength(200)))),
  /** Lifetime in seconds, 60 to 86,400 (default `CLIENT_TOKEN_TTL_SECONDS`, 900). */
  expires_in: Schema.optional(Schema.Int.pipe(Schema.between(60, 86_400)))
})

export const ApiKey = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("api_key"),
  name: Schema.String,
  key_prefix: Schema.String,
  created_at: Schema.String,
  revoked_at: Schema.NullOr(Schema.String)
}).annotations({ identifier: "ApiKey" })

export const CreatedApiKey = Schema.Struct({
  ...ApiKey.fields,
  /** The full key, returned only in this response. */
  key: Schema.String
}).annotations({ identifier: "CreatedApiKey" })

export const ProjectView = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  created_at: Schema.String
})

const IdPath = Schema.Struct({ id: Schema.String })

export class ProjectsApi extends HttpApiGroup.make("projects")
  .add(
    HttpApiEndpoint.post("createClientToken", "/v1/client-tokens")
      .setPayload(ClientTokenRequest)
      .addSuccess(ClientToken, { status: 201 })
  )
  .add(
    HttpApiEndpoint.get("listApiKeys", "/v1/api-keys")
      .addSuccess(Schema.Struct({ data: Schema.Array(ApiKey), next_cursor: Schema.Null }))
  )
  .add(
    HttpApiEndpoint.post("createApiKey", "/v1/api-keys")
      .setPayload(Schema.Struct({ name: Schema.optional(Schema.String.pipe(Schema.maxLength(200))) }))
      .addSuccess(CreatedApiKey, { status: 201 })
  )
  .add(
    HttpApiEndpoint.del("revokeApiKey", "/v1/api-keys/:id")
      .setPath(IdPath)
      .addSuccess(DeletedResponse)
  )
  .middleware(SecretKeyAuth)
  .addError(errorResponse("platform", 400))
  .addError(errorResponse("platform", 404))
{}

/** Introspection: which project and credential kind a request authenticates as. */
export class WhoAmIApi extends HttpApiGroup.make("whoami")
  .add(
    HttpApiEndpoint.get("currentProject", "/v1/project")
      .addSuccess(Schema.Struct({
        id: Schema.String,
        object: Schema.Literal("project"),
        name: Schema.String,
        credential: Schema.Literal("secret", "api", "client"),
        tenant_id: Schema.NullOr(Schema.String),
        external_user_id: Schema.NullOr(Schema.String)
      }))
  )
  .middleware(AnyProjectAuth)
{}

export class DashboardProjectsApi extends HttpApiGroup.make("dashboardProjects")
  .add(
    HttpApiEndpoint.get("getProject", "/api/projects/:projectId")
      .setPath(Schema.Struct({ projectId: Schema.String }))
      .addSuccess(Schema.Struct({ project: ProjectView }))
  )
  .middleware(DashboardAuth)
  .addError(errorResponse("message", 404))
{}

