/** Handlers of provider connections: the calling project from the secret key, then the service. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { GatewayApi } from "../../layers/http/api.ts"
import { CurrentProject } from "../auth/Principal.ts"
import { ProviderConnections } from "./Service.ts"

export const ConnectionsHttpLive = HttpApiBuilder.group(GatewayApi, "providerConnections", (handlers) =>
  Effect.gen(function*() {
    const connections = yield* ProviderConnections
    const project = Effect.map(CurrentProject, (p) => p.projectId)
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(project, (id) => connections.create(id, payload)))
      .handle("list", ({ urlParams }) => Effect.flatMap(project, (id) => connections.list(id, urlParams)))
      .handle("validateKey", ({ payload }) => connections.validateKey(payload))
      .handle("get", ({ path }) => Effect.flatMap(project, (id) => connections.get(id, path.id)))
      .handle("remove", ({ path }) =>
        Effect.flatMap(project, (id) => connections.remove(id, path.id)).pipe(
          Effect.as({ id: path.id, deleted: true, status: "deleted" })
        ))
      .handle("validate", ({ path }) => Effect.flatMap(project, (id) => connections.validate(id, path.id)))
      .handle("sync", ({ path }) => Effect.flatMap(project, (id) => connections.sync(id, path.id)))
      .handle("listSyncs", ({ path, urlParams }) =>
        Effect.flatMap(project, (id) => connections.listSyncs(id, path.id, urlParams)))
      .handle("getSync", ({ path }) => Effect.flatMap(project, (id) => connections.getSync(id, path.id, path.syncId)))
  }))
