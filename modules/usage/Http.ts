import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { GatewayApi } from "../../layers/http/api.ts"
import { CurrentProject } from "../auth/Principal.ts"
import { Billing } from "./Service.ts"

export const UsageHttpLive = HttpApiBuilder.group(GatewayApi, "usage", (handlers) =>
  Effect.gen(function*() {
    const billing = yield* Billing
    return handlers.handle("listUsage", ({ urlParams }) =>
      Effect.gen(function*() {
        const project = yield* CurrentProject
        yield* billing.flush
        return yield* billing.list(project.projectId, { limit: urlParams.limit ?? 20, cursor: urlParams.cursor })
      }))
  }))
