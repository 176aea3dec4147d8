/** Liveness and readiness probes. */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { errorResponse } from "../../schemas/errors.ts"

export const Health = Schema.Struct({
  status: Schema.Literal("ok"),
  database: Schema.optional(Schema.Literal("postgres", "pglite"))
})

export class HealthApi extends HttpApiGroup.make("health")
  .add(HttpApiEndpoint.get("healthz", "/healthz").addSuccess(Health))
  .add(HttpApiEndpoint.get("readyz", "/readyz").addSuccess(Health).addError(errorResponse("platform", 503)))
{}
