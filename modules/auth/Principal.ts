/** Who is calling: provided to handlers by the security middlewares of `modules/auth/Api.ts`. */
import { Context } from "effect"

export type CredentialKind = "secret" | "api" | "client"

export class CurrentProject extends Context.Tag("CurrentProject")<CurrentProject, {
  readonly projectId: string
  readonly credential: CredentialKind
  /** Id of the key or client token that authenticated the request. */
  readonly credentialId: string
  /** Set for client tokens issued for a tenant or end user. */
  readonly tenantId: string | null
  readonly externalUserId: string | null
}>() {}

export class CurrentUser extends Context.Tag("CurrentUser")<CurrentUser, {
  readonly userId: string
  readonly email: string
  readonly sessionId: string
}>() {}
