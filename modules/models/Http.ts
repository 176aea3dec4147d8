/** Handler of the per-key model list. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { GatewayApi } from "../../layers/http/api.ts"
import { CurrentProject } from "../auth/Principal.ts"
import { ModelListing } from "./Service.ts"

export const ModelsHttpLive = HttpApiBuilder.group(GatewayApi, "models", (handlers) =>
  Effect.gen(function*() {
    const listing = yield* ModelListing
    return handlers.handle("list", ({ urlParams }) =>
      Effect.flatMap(CurrentProject, (project) => listing.list(project.projectId, urlParams)))
  }))
