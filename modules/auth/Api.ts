/**
 * Authentication surfaces (contract §5) as HttpApi security middlewares, and the dashboard login endpoints.
 *
 * | middleware          | accepts                                                                  |
 * |---------------------|--------------------------------------------------------------------------|
 * | `SecretKeyAuth`     | `Authorization: Bearer csk_…` (platform, web, webhooks, client tokens)   |
 * | `ServiceKeyAuth`    | `SERVICE_API_KEY: sak_…` (vision, voice, chat)                            |
 * | `ModelsAuth`        | the API key as `SERVICE_API_KEY` or `Authorization: Bearer` (OpenAI paths) |
 * | `BrowserAuth`       | the API key as `SERVICE_API_KEY`, or `Authorization: Bearer ect_…` (sessions: browser execution) |
 * | `AnyProjectAuth`    | any project credential: bearer `csk_`/`sak_`/`ect_`, or `SERVICE_API_KEY` (introspection) |
 * | `DashboardAuth`     | the `eap_session` cookie of a signed-in dashboard user                   |
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { Schema } from "effect"
import { errorResponse } from "../../schemas/errors.ts"
import { CurrentProject, CurrentUser } from "./Principal.ts"

export const SESSION_COOKIE = "eap_session"

const serviceApiKey = HttpApiSecurity.apiKey({ in: "header", key: "SERVICE_API_KEY" })

export class SecretKeyAuth extends HttpApiMiddleware.Tag<SecretKeyAuth>()("SecretKeyAuth", {
  provides: CurrentProject,
  failure: errorResponse("platform", 401),
  security: { secretKey: HttpApiSecurity.bearer }
}) {}

export class ServiceKeyAuth extends HttpApiMiddleware.Tag<ServiceKeyAuth>()("ServiceKeyAuth", {
  provides: CurrentProject,
  failure: errorResponse("flat", 401),
  security: { serviceApiKey }
}) {}

export class ModelsAuth extends HttpApiMiddleware.Tag<ModelsAuth>()("ModelsAuth", {
  provides: CurrentProject,
  failure: errorResponse("platform", 401),
  security: { serviceApiKey, bearerApiKey: HttpApiSecurity.bearer }
}) {}

export class BrowserAuth extends HttpApiMiddleware.Tag<BrowserAuth>()("BrowserAuth", {
  provides: CurrentProject,
  failure: errorResponse("platform", 401),
  security: { serviceApiKey, clientToken: HttpApiSecurity.bearer }
}) {}

export class AnyProjectAuth extends HttpApiMiddleware.Tag<AnyProjectAuth>()("AnyProjectAuth", {
  provides: CurrentProject,
  failure: errorResponse("platform", 401),
  security: { bearer: HttpApiSecurity.bearer, serviceApiKey }
}) {}

export class DashboardAuth extends HttpApiMiddleware.Tag<DashboardAuth>()("DashboardAuth", {
  provides: CurrentUser,
  failure: errorResponse("message", 401),
  security: { session: HttpApiSecurity.apiKey({ in: "cookie", key: SESSION_COOKIE }) }
}) {}

export const DashboardUser = Schema.Struct({
  id: Schema.String,
  email: Schema.String,
  projects: Schema.Array(Schema.Struct({ id: Schema.String, name: Schema.String }))
})

export const LoginRequest = Schema.Struct({
  email: Schema.String,
  password: Schema.String
})

export class AuthApi extends HttpApiGroup.make("auth")
  .add(
    HttpApiEndpoint.post("login", "/api/auth/login")
      .setPayload(LoginRequest)
      .addSuccess(Schema.Struct({ user: DashboardUser }))
      .addError(errorResponse("message", 400))
      .addError(errorResponse("message", 401))
  )
  .add(
    HttpApiEndpoint.post("logout", "/api/auth/logout")
      .addSuccess(Schema.Struct({ success: Schema.Boolean }))
      .middleware(DashboardAuth)
  )
  .add(
    HttpApiEndpoint.get("me", "/api/auth/me")
      .addSuccess(Schema.Struct({ user: DashboardUser }))
      .middleware(DashboardAuth)
  )
{}
