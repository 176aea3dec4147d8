/** Security middleware implementations and the dashboard login handlers. */
import { HttpApiBuilder, HttpApp, HttpServerResponse } from "@effect/platform"
import { Duration, Effect, Layer, Redacted } from "effect"
import { AppConfig } from "../../layers/config.ts"
import { GatewayApi } from "../../layers/http/api.ts"
import { ApiError } from "../../schemas/errors.ts"
import { AnyProjectAuth, BrowserAuth, DashboardAuth, ModelsAuth, SecretKeyAuth, ServiceKeyAuth, SESSION_COOKIE } from "./Api.ts"
import { CurrentUser } from "./Principal.ts"
import { Credentials, KEY_PREFIX } from "./Service.ts"

export const AuthMiddlewareLive = Layer.mergeAll(
  Layer.effect(
    SecretKeyAuth,
    Effect.map(Credentials, (c) => SecretKeyAuth.of({ secretKey: c.authenticateSecretKey }))
  ),
  Layer.effect(
    ServiceKeyAuth,
    Effect.map(Credentials, (c) => ServiceKeyAuth.of({ serviceApiKey: c.authenticateApiKey }))
  ),
  Layer.effect(
    ModelsAuth,
    Effect.map(Credentials, (c) =>
      ModelsAuth.of({ serviceApiKey: c.authenticateApiKey, bearerApiKey: c.authenticateApiKey }))
  ),
  Layer.effect(
    BrowserAuth,
    Effect.map(Credentials, (c) =>
      BrowserAuth.of({ serviceApiKey: c.authenticateApiKey, clientToken: c.authenticateClientToken }))
  ),
  Layer.effect(
    AnyProjectAuth,
    Effect.map(Credentials, (c) =>
      AnyProjectAuth.of({
        bearer: (token) => {
          const value = Redacted.value(token)
          return value.startsWith(KEY_PREFIX.secret)
            ? c.authenticateSecretKey(token)
            : value.startsWith(KEY_PREFIX.client)
            ? c.authenticateClientToken(token)
            : c.authenticateApiKey(token)
        },
        serviceApiKey: c.authenticateApiKey
      }))
  ),
  Layer.effect(
    DashboardAuth,
    Effect.map(Credentials, (c) => DashboardAuth.of({ session: c.authenticateSession }))
  )
)

const setSessionCookie = (value: string, maxAge: Duration.Duration, secure: boolean) =>
  HttpApp.appendPreResponseHandler((_request, response) =>
    HttpServerResponse.setCookie(response, SESSION_COOKIE, value, {
      httpOnly: true,
      sameSite: "lax",
      secure,
      path: "/",
      maxAge
    }).pipe(Effect.orDie)
  )

export const AuthHttpLive = HttpApiBuilder.group(
  GatewayApi,
  "auth",
  (handlers) =>
    Effect.gen(function*() {
      const credentials = yield* Credentials
      const config = yield* AppConfig
      const describe = (user: { readonly id: string; readonly email: string }) =>
        credentials.projectsOfUser(user.id).pipe(
          Effect.map((projects) => ({ user: { id: user.id, email: user.email, projects } }))
        )
      return handlers
        .handle("login", ({ payload }) =>
          Effect.gen(function*() {
            if (payload.email.length === 0 || payload.password.length === 0) {
              return yield* ApiError.badRequest("email and password are required")
            }
            const session = yield* credentials.login(payload.email, payload.password)
            yield* setSessionCookie(
              Redacted.value(session.token),
              Duration.seconds(config.dashboardSessionTtlSeconds),
              config.secureCookies
            )
            return yield* describe(session.user)
          }))
        .handle("logout", () =>
          Effect.gen(function*() {
            const user = yield* CurrentUser
            yield* credentials.logout(user.sessionId)
            yield* setSessionCookie("", Duration.zero, config.secureCookies)
            return { success: true }
          }))
        .handle("me", () => Effect.flatMap(CurrentUser, (user) => describe({ id: user.userId, email: user.email })))
    })
)
