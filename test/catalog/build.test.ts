import { describe, expect, it } from "vitest"
import { buildCatalog } from "../../modules/catalog/Build.ts"
import { OVERLAY_MODELS, PROVIDERS } from "../../modules/catalog/overlay.ts"

const at = new Date("2026-11-01T00:00:00Z")

describe("catalog build", () => {
  it("a price override in the overlay wins over the packages and names its own source", () => {
    const built = buildCatalog({
      providers: PROVIDERS,
      overlay: OVERLAY_MODELS,
      overrides: {
        "openai/gpt-4o": {
          input_per_million: 2,
          source: { name: "negotiated rate", url: "https://example.com/contract", updated_at: "2026-10-01" }
        }
      },
      at
    })
    const model = built.models.find((m) => m.id === "gpt-4o")
    expect(model?.pricing.input_per_million).toBe(2)
    // Fields the override leaves out keep the package value.
    expect(model?.pricing.output_per_million).toBe(10)
    expect(model?.price_source).toEqual({ name: "negotiated rate", url: "https://example.com/contract", updated_at: "2026-10-01" })
    expect(built.warnings).toEqual([])
  })

  it("an override that matches no model is reported", () => {
    const built = buildCatalog({
      providers: PROVIDERS,
      overlay: [],
      overrides: { "openai/no-such-model": { input_per_million: 1, source: { name: "x", updated_at: "2026-01-01" } } },
      at
    })
    expect(built.warnings).toEqual(["price override openai/no-such-model matches no model"])
  })

  it("an overlay model without a price is unpriced, with null prices", () => {
    const built = buildCatalog({
      providers: PROVIDERS,
      overlay: [{ id: "mystery-tts", provider: "spitch", name: "Mystery", description: "", type: "tts" }],
      overrides: {},
      at
    })
    const model = built.models.find((m) => m.id === "mystery-tts")
    expect(model).toMatchObject({
      pricing_status: "unpriced",
      price_source: null,
      pricing: { input_per_million: null, output_per_million: null, per_1k_chars: null, per_minute: null, input_display: "—" }
    })
  })

  it("image generators stay out unless the overlay gives a per-image price", () => {
    const without = buildCatalog({ providers: PROVIDERS, overlay: [], overrides: {}, at })
    expect(without.models.some((m) => m.id === "gpt-image-1")).toBe(false)
    const withPrice = buildCatalog({ providers: PROVIDERS, overlay: OVERLAY_MODELS, overrides: {}, at })
    expect(withPrice.models.find((m) => m.id === "gpt-image-1")?.pricing).toMatchObject({ per_image: true, per_image_usd: 0.042 })
  })

  it("models.dev zero prices (free previews) are not shown as $0", () => {
    const built = buildCatalog({ providers: PROVIDERS, overlay: [], overrides: {}, at })
    const meta = built.models.filter((m) => m.provider === "meta")
    expect(meta.length).toBeGreaterThan(0)
    for (const model of meta) {
      expect(model.pricing.input_per_million === 0, model.id).toBe(false)
    }
  })
})
