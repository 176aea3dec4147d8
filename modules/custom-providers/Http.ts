/** Handlers of custom provider management: membership check, then the service. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { GatewayApi } from "../../layers/http/api.ts"
import { CurrentUser } from "../auth/Principal.ts"
import { Credentials } from "../auth/Service.ts"
import { CustomProviders, type CustomProviderView } from "./Service.ts"

const summary = (p: CustomProviderView) => ({
  id: p.id,
  name: p.name,
  base_url: p.base_url,
  api_format: p.api_format,
  is_active: p.is_active,
  has_api_key: p.has_api_key,
  created_at: p.created_at
})

const detail = (p: CustomProviderView) => ({ ...summary(p), updated_at: p.updated_at, custom_models: p.models })

export const CustomProvidersHttpLive = HttpApiBuilder.group(GatewayApi, "customProviders", (handlers) =>
  Effect.gen(function*() {
    const credentials = yield* Credentials
    const providers = yield* CustomProviders
    /** 404 unless the signed-in user belongs to the project (§7.2: project not found). */
    const member = (projectId: string) =>
      Effect.flatMap(CurrentUser, (user) => credentials.requireMember(projectId, user.userId))
    return handlers
      .handle("create", ({ path, payload }) =>
        member(path.projectId).pipe(
          Effect.zipRight(providers.create(path.projectId, payload)),
          Effect.map((p) => ({ provider: summary(p) }))
        ))
      .handle("list", ({ path }) =>
        member(path.projectId).pipe(
          Effect.zipRight(providers.list(path.projectId)),
          Effect.map((list) => ({
            providers: list.map((p) => ({
              ...summary(p),
              custom_models: p.models.map((m) => ({ id: m.id, model_name: m.model_name, display_name: m.display_name }))
            }))
          }))
        ))
      .handle("get", ({ path }) =>
        member(path.projectId).pipe(
          Effect.zipRight(providers.get(path.projectId, path.providerId)),
          Effect.map((p) => ({ provider: detail(p) }))
        ))
      .handle("update", ({ path, payload }) =>
        member(path.projectId).pipe(
          Effect.zipRight(providers.update(path.projectId, path.providerId, payload)),
          Effect.map((p) => ({ provider: detail(p) }))
        ))
      .handle("remove", ({ path }) =>
        member(path.projectId).pipe(
          Effect.zipRight(providers.remove(path.projectId, path.providerId)),
          Effect.as({ success: true as const })
        ))
      .handle("test", ({ path, payload }) =>
        member(path.projectId).pipe(Effect.zipRight(providers.testConnection(path.projectId, payload))))
  }))
