import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber, TestClock } from "effect"
import { Catalog } from "../../modules/catalog/Service.ts"
import type { CustomProviderView } from "../../modules/custom-providers/Service.ts"
import { makeModelList, type ModelListSources } from "../../modules/models/Service.ts"

const customProvider: CustomProviderView = {
  id: "cprov_1",
  name: "home-lab",
  base_url: "http://10.0.0.2:8000/v1",
  api_format: "openai",
  is_active: true,
  has_api_key: false,
  created_at: "2026-11-01T00:00:00.000Z",
  updated_at: "2026-11-01T00:00:00.000Z",
  models: [{ id: "cmod_1", model_name: "mixtral", display_name: "Mixtral", is_active: true }]
}

const sources = (catalog: Catalog, overrides: Partial<ModelListSources>): ModelListSources => ({
  catalog,
  connectionsOf: () => Effect.succeed([]),
  syncedModelsOf: () => Effect.succeed([]),
  customProvidersOf: () => Effect.succeed([customProvider]),
  managed: (provider) => provider === "openai",
  sourceTimeout: Duration.seconds(2),
  ...overrides
})

describe("model list sources", () => {
  it.effect("a source slower than its time limit is skipped and the list is partial", () =>
    Effect.gen(function*() {
      const catalog = yield* Catalog
      const listing = makeModelList(sources(catalog, {
        customProvidersOf: () => Effect.as(Effect.sleep(Duration.seconds(10)), [customProvider])
      }))
      const fiber = yield* Effect.fork(listing.list("proj_1", {}))
      yield* TestClock.adjust(Duration.seconds(2))
      const page = yield* Fiber.join(fiber)
      expect(page.partial).toBe(true)
      expect(page.data.some((r) => r.source === "custom")).toBe(false)
      expect(page.data.some((r) => r.id === "gpt-4o" && r.available)).toBe(true)
    }).pipe(Effect.provide(Catalog.Default)))

  it.effect("a source just within its time limit is kept", () =>
    Effect.gen(function*() {
      const catalog = yield* Catalog
      const listing = makeModelList(sources(catalog, {
        customProvidersOf: () => Effect.as(Effect.sleep(Duration.millis(1999)), [customProvider])
      }))
      const fiber = yield* Effect.fork(listing.list("proj_1", { provider: "custom" }))
      yield* TestClock.adjust(Duration.seconds(2))
      const page = yield* Fiber.join(fiber)
      expect(page.partial).toBe(false)
      expect(page.data.map((r) => r.id)).toEqual(["home-lab", "mixtral"])
    }).pipe(Effect.provide(Catalog.Default)))

  it.effect("a failing or dying source makes the list partial without failing it", () =>
    Effect.gen(function*() {
      const catalog = yield* Catalog
      const failing = makeModelList(sources(catalog, { syncedModelsOf: () => Effect.die(new Error("relation does not exist")) }))
      const page = yield* failing.list("proj_1", {})
      expect(page.partial).toBe(true)
      expect(page.data.some((r) => r.id === "home-lab")).toBe(true)
    }).pipe(Effect.provide(Catalog.Default)))
})
