/** The usage ledger over HTTP (secret key): every billable call with its tokens, units and cost. */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { CursorQuery } from "../../schemas/common.ts"
import { errorResponse } from "../../schemas/errors.ts"
import { SecretKeyAuth } from "../auth/Api.ts"
import { UsageEvent } from "./Service.ts"

export class UsageApi extends HttpApiGroup.make("usage")
  .add(
    HttpApiEndpoint.get("listUsage", "/v1/usage")
      .setUrlParams(CursorQuery)
      .addSuccess(Schema.Struct({ data: Schema.Array(UsageEvent), next_cursor: Schema.NullOr(Schema.String) }))
  )
  .middleware(SecretKeyAuth)
  .addError(errorResponse("platform", 400))
{}
