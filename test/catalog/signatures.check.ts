/** Compile-time check of the service signatures other modules (chat gateway, voice) rely on; `tsc` fails if they drift. */
import type { Effect, Option } from "effect"
import type { Catalog, CatalogModel, CatalogProvider, ModelFilter } from "../../modules/catalog/Service.ts"
import type { ByokKey, ProviderConnections } from "../../modules/connections/Service.ts"
import type { CustomProviders, ResolvedCustomProvider } from "../../modules/custom-providers/Service.ts"

type Check<A extends B, B> = [A, B]
export type Signatures = [
  Check<Catalog["findModel"], (id: string) => Option.Option<CatalogModel>>,
  Check<Catalog["listModels"], (filter?: ModelFilter) => ReadonlyArray<CatalogModel>>,
  Check<Catalog["listProviders"], () => ReadonlyArray<CatalogProvider>>,
  Check<CustomProviders["resolve"], (projectId: string, name: string) => Effect.Effect<Option.Option<ResolvedCustomProvider>>>,
  Check<ProviderConnections["byokKey"], (projectId: string, provider: string) => Effect.Effect<Option.Option<ByokKey>>>
]
