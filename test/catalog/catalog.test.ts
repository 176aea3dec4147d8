import { Effect, Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { installedVersion } from "../../modules/catalog/Build.ts"
import { DATA_PACKAGES } from "../../modules/catalog/overlay.ts"
import { Catalog } from "../../modules/catalog/Service.ts"
import { type Gateway, startGateway } from "../harness.ts"
import { call } from "../http.ts"

interface Row {
  id: string
  name: string
  provider: string
  provider_name: string
  provider_logo_url: string
  type: string
  types: Array<string>
  context_window: number
  context_display: string
  description: string
  capabilities: Record<string, boolean>
  pricing: {
    input_per_million: number | null
    output_per_million: number | null
    currency: string
    input_display: string
    output_display: string
    per_image: boolean
    per_image_usd: number | null
    per_1k_chars: number | null
    per_minute: number | null
  }
  pricing_status: "priced" | "unpriced"
  price_source: { name: string; url?: string; updated_at: string } | null
}

interface ProviderRow {
  id: string
  name: string
  logo_url: string
  website: string
  docs_url: string
  model_count: number
}

let gw: Gateway
let all: Array<Row>
beforeAll(async () => {
  gw = await startGateway()
  all = ((await call(gw.baseUrl, "GET", "/api/models")).body as { data: Array<Row> }).data
})
afterAll(() => gw?.close())

const models = async (query: string) => {
  const res = await call(gw.baseUrl, "GET", `/api/models${query}`)
  expect(res.status).toBe(200)
  return (res.body as { data: Array<Row> }).data
}

const CONTRACT_PROVIDERS = [
  "openai", "anthropic", "google", "deepgram", "cartesia", "elevenlabs", "assemblyai", "spitch",
  "mistral", "groq", "deepseek", "xai", "meta", "cohere", "perplexity", "together", "fireworks"
]

describe("catalog data", () => {
  it("lists at least 15 providers and 150 models, covering every contract and major chat vendor", async () => {
    const res = await call(gw.baseUrl, "GET", "/api/providers")
    expect(res.status).toBe(200)
    const body = res.body as { object: string; data: Array<ProviderRow>; total: number }
    expect(body.object).toBe("list")
    expect(body.total).toBe(body.data.length)
    expect(body.data.length).toBeGreaterThanOrEqual(15)
    expect(body.data.map((p) => p.id)).toEqual(expect.arrayContaining(CONTRACT_PROVIDERS))
    expect(all.length).toBeGreaterThanOrEqual(150)
    for (const provider of body.data) expect(provider.model_count).toBeGreaterThan(0)
    expect(body.data.find((p) => p.id === "spitch")?.name).toMatch(/regional/i)
  })

  it("every price names its source and date; unpriced models carry null prices, never $0", () => {
    for (const row of all) {
      if (row.pricing_status === "priced") {
        expect(row.price_source, row.id).not.toBeNull()
        expect(row.price_source?.name.length, row.id).toBeGreaterThan(0)
        expect(row.price_source?.updated_at, row.id).toMatch(/^\d{4}-\d{2}-\d{2}/)
        const prices = [row.pricing.input_per_million, row.pricing.output_per_million, row.pricing.per_image_usd, row.pricing.per_1k_chars, row.pricing.per_minute]
        expect(prices.some((p) => p !== null && p > 0), row.id).toBe(true)
      } else {
        expect(row.pricing_status).toBe("unpriced")
        expect(row.price_source).toBeNull()
        expect(row.pricing.input_per_million).toBeNull()
        expect(row.pricing.output_per_million).toBeNull()
        expect(row.pricing.per_image_usd).toBeNull()
      }
      expect(row.pricing.input_per_million === 0 && row.pricing.output_per_million === 0, row.id).toBe(false)
      expect(row.pricing.currency).toBe("USD")
    }
    expect(all.filter((r) => r.pricing_status === "priced").length).toBeGreaterThanOrEqual(150)
    expect(all.find((r) => r.id === "regional-tts")?.pricing_status).toBe("unpriced")
  })

  it("token prices come from the maintained packages with the provider's pricing page", () => {
    const gpt4o = all.find((r) => r.id === "gpt-4o")
    expect(gpt4o?.pricing.input_per_million).toBe(2.5)
    expect(gpt4o?.pricing.output_per_million).toBe(10)
    expect(gpt4o?.pricing.input_display).toBe("$2.50 / 1M tokens")
    expect(gpt4o?.price_source?.name).toMatch(/^@pydantic\/genai-prices /)
    expect(gpt4o?.price_source?.url).toMatch(/^https:\/\//)
    expect(gpt4o?.context_window).toBe(128000)
    expect(gpt4o?.context_display).toBe("128K")
    expect(gpt4o?.capabilities).toMatchObject({ vision: true, tools: true })
  })

  it("voice models are priced per 1,000 characters or per minute from the reviewed overlay", () => {
    const byId = (id: string) => all.find((r) => r.id === id)
    expect(byId("tts-1")?.pricing).toMatchObject({ per_1k_chars: 0.015, input_display: "$0.015 / 1K chars" })
    expect(byId("tts-1-hd")?.pricing.per_1k_chars).toBe(0.03)
    expect(byId("whisper-1")?.pricing).toMatchObject({ per_minute: 0.006, input_display: "$0.006 / min" })
    expect(byId("nova-3")?.pricing.per_minute).toBe(0.0043)
    expect(byId("aura-asteria-en")?.pricing.per_1k_chars).toBe(0.015)
    expect(byId("eleven_flash_v2_5")?.pricing.per_1k_chars).toBe(0.05)
    expect(byId("eleven_multilingual_v2")?.pricing.per_1k_chars).toBe(0.1)
    expect(byId("transcribe-universal")?.pricing.per_minute).toBe(0.0025)
    expect(byId("sonic-2")?.price_source).toMatchObject({ note: expect.stringMatching(/UNCONFIRMED/) })
    for (const id of ["tts-1", "aura-luna-en", "sonic-2", "eleven_turbo_v2_5", "regional-tts"]) expect(byId(id)?.type).toBe("tts")
    for (const id of ["whisper-1", "nova-3", "transcribe-universal", "regional-stt"]) expect(byId(id)?.type).toBe("stt")
    expect(byId("regional-stt")?.provider).toBe("spitch")
  })

  it("image models bill per image: per_image true, per_image_usd set, output_display per img", () => {
    const images = all.filter((r) => r.type === "image")
    expect(images.length).toBeGreaterThanOrEqual(5)
    for (const row of images) {
      expect(row.pricing.per_image, row.id).toBe(true)
      expect(row.pricing.per_image_usd, row.id).toBeGreaterThan(0)
      expect(row.pricing.output_display, row.id).toBe("per img")
    }
    for (const row of all.filter((r) => r.type !== "image")) {
      expect(row.pricing.per_image, row.id).toBe(false)
      expect(row.pricing.per_image_usd, row.id).toBeNull()
    }
    expect(all.find((r) => r.id === "dall-e-3")?.pricing.per_image_usd).toBe(0.04)
  })

  it("the overlay records the installed data package versions (review prices when a package is updated)", () => {
    expect(installedVersion(DATA_PACKAGES.genaiPrices.package)).toBe(DATA_PACKAGES.genaiPrices.version)
    expect(installedVersion(DATA_PACKAGES.tokenlens.package)).toBe(DATA_PACKAGES.tokenlens.version)
  })

  it("the Catalog service finds a model by exact id, case-insensitively", async () => {
    const found = await gw.run(Effect.map(Catalog, (c) => ({
      exact: c.findModel("GPT-4O"),
      missing: c.findModel("gpt-4"),
      partial: c.findModel("gpt-4o-m")
    })))
    expect(Option.getOrThrow(found.exact)).toMatchObject({ id: "gpt-4o", provider: "openai", pricing_status: "priced" })
    expect(Option.isSome(found.missing)).toBe(true)
    expect(Option.isNone(found.partial)).toBe(true)
  })
})

describe("GET /api/models filters", () => {
  it("provider matches the provider id case-insensitively", async () => {
    const rows = await models("?provider=OpenAI")
    expect(rows.length).toBeGreaterThan(10)
    expect(rows.every((r) => r.provider === "openai")).toBe(true)
    expect(await models("?provider=nobody")).toEqual([])
  })

  it("type matches the model's types", async () => {
    for (const type of ["chat", "reasoning", "code", "search", "vision", "image"]) {
      const rows = await models(`?type=${type}`)
      expect(rows.length, type).toBeGreaterThan(0)
      expect(rows.every((r) => r.types.includes(type)), type).toBe(true)
    }
    const res = await call(gw.baseUrl, "GET", "/api/models?type=hologram")
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ error: "invalid_request", param: "type" })
  })

  it("search matches name, id, provider and description, case-insensitively", async () => {
    const byName = await models("?search=sonnet")
    expect(byName.length).toBeGreaterThan(0)
    expect(byName.every((r) => `${r.name} ${r.id} ${r.provider} ${r.provider_name} ${r.description}`.toLowerCase().includes("sonnet"))).toBe(true)
    expect((await models("?search=DEEPGRAM")).every((r) => r.provider === "deepgram")).toBe(true)
    const withDescription = all.find((r) => r.description.length > 20 && !r.name.toLowerCase().includes("frontier"))
    const word = withDescription?.description.split(/\s+/).find((w) => w.length > 7)
    expect(word).toBeDefined()
    const byDescription = await models(`?search=${encodeURIComponent(word ?? "")}`)
    expect(byDescription.map((r) => r.id)).toContain(withDescription?.id)
  })

  it("capability is repeatable and comma-separated; every listed capability must match", async () => {
    const repeated = await models("?capability=vision&capability=tools")
    const comma = await models("?capability=vision,tools")
    expect(repeated.length).toBeGreaterThan(0)
    expect(repeated.map((r) => r.id)).toEqual(comma.map((r) => r.id))
    expect(repeated.every((r) => r.capabilities.vision && r.capabilities.tools)).toBe(true)
    const vision = await models("?capability=vision")
    expect(vision.length).toBeGreaterThan(repeated.length)
    for (const capability of ["reasoning", "vision", "code", "search", "image", "tools", "structuredOutput", "fileInput", "videoInput", "audioInput", "caching"]) {
      const rows = await models(`?capability=${capability}`)
      expect(rows.length, capability).toBeGreaterThan(0)
      expect(rows.every((r) => r.capabilities[capability]), capability).toBe(true)
    }
    const res = await call(gw.baseUrl, "GET", "/api/models?capability=telepathy")
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ error: "invalid_request", param: "capability", request_id: expect.any(String) })
  })

  it("all filters combine", async () => {
    const rows = await models("?provider=openai&type=reasoning&search=mini&capability=tools,vision")
    expect(rows.length).toBeGreaterThan(0)
    const expected = all.filter((r) =>
      r.provider === "openai" && r.types.includes("reasoning") &&
      `${r.name} ${r.id} ${r.provider} ${r.provider_name} ${r.description}`.toLowerCase().includes("mini") &&
      r.capabilities.tools && r.capabilities.vision
    )
    expect(rows.map((r) => r.id)).toEqual(expected.map((r) => r.id))
  })

  it("provider model_count equals the rows /api/models lists for that provider", async () => {
    const providers = ((await call(gw.baseUrl, "GET", "/api/providers")).body as { data: Array<ProviderRow> }).data
    for (const provider of providers) {
      expect(provider.model_count, provider.id).toBe((await models(`?provider=${provider.id}`)).length)
    }
    expect(providers.reduce((sum, p) => sum + p.model_count, 0)).toBe(all.length)
  })

  it("rows carry the contract's catalog fields", () => {
    const row = all.find((r) => r.id === "claude-sonnet-4-20250514")
    expect(row).toMatchObject({
      provider: "anthropic",
      provider_name: "Anthropic",
      provider_logo_url: "/api/providers/anthropic/logo",
      type: expect.any(String),
      context_window: 200000,
      context_display: "200K",
      pricing: { input_per_million: 3, output_per_million: 15, currency: "USD", per_image: false, per_image_usd: null }
    })
  })
})

describe("documentation", () => {
  it("the OpenAPI document lists the catalog, model-list, custom-provider and connection endpoints", async () => {
    const res = await call(gw.baseUrl, "GET", "/openapi.json")
    expect(res.status).toBe(200)
    const paths = Object.keys((res.body as { paths: Record<string, unknown> }).paths)
    expect(paths).toEqual(expect.arrayContaining([
      "/api/models",
      "/api/providers",
      "/api/providers/{id}/logo",
      "/api/v1/models",
      "/api/projects/{projectId}/providers",
      "/api/projects/{projectId}/providers/{providerId}",
      "/api/projects/{projectId}/custom-providers/test",
      "/v1/provider-connections",
      "/v1/provider-connections/{id}/sync"
    ]))
  })

  it("empty filter values are ignored", async () => {
    expect((await models("?provider=&type=&search=")).length).toBe(all.length)
  })
})

describe("caching", () => {
  for (const path of ["/api/models", "/api/models?provider=openai", "/api/providers", "/api/providers/openai/logo"]) {
    it(`${path} is cacheable for an hour with an ETag and answers If-None-Match with 304`, async () => {
      const first = await call(gw.baseUrl, "GET", path)
      expect(first.status).toBe(200)
      expect(first.headers.get("cache-control")).toContain("s-maxage=3600")
      const etag = first.headers.get("etag")
      expect(etag).toMatch(/^".+"$/)
      const again = await call(gw.baseUrl, "GET", path)
      expect(again.headers.get("etag")).toBe(etag)
      const revalidated = await call(gw.baseUrl, "GET", path, { headers: { "if-none-match": etag ?? "" } })
      expect(revalidated.status).toBe(304)
      expect(revalidated.text).toBe("")
      expect(revalidated.headers.get("etag")).toBe(etag)
      const changed = await call(gw.baseUrl, "GET", path, { headers: { "if-none-match": "\"something-else\"" } })
      expect(changed.status).toBe(200)
    })
  }

  it("different filters have different ETags", async () => {
    const a = await call(gw.baseUrl, "GET", "/api/models?provider=openai")
    const b = await call(gw.baseUrl, "GET", "/api/models?provider=anthropic")
    expect(a.headers.get("etag")).not.toBe(b.headers.get("etag"))
  })
})

describe("GET /api/providers/{id}/logo", () => {
  const BRANDED = ["openai", "anthropic", "google", "elevenlabs", "assemblyai", "mistral", "groq", "deepseek", "xai", "meta", "cohere", "perplexity", "together", "fireworks"]
  const MONOGRAM = ["deepgram", "cartesia", "spitch"]

  it("answers an SVG for every known provider", async () => {
    for (const id of CONTRACT_PROVIDERS) {
      const res = await call(gw.baseUrl, "GET", `/api/providers/${id}/logo`)
      expect(res.status, id).toBe(200)
      expect(res.headers.get("content-type"), id).toContain("image/svg+xml")
      expect(res.text, id).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^>]*>/)
      expect(res.text.trim().endsWith("</svg>"), id).toBe(true)
      // A dark tile behind a white mark.
      expect(res.text, id).toContain('<rect width="64" height="64" rx="14" fill="#111827"/>')
      expect(res.text, id).toContain('fill="#FFFFFF"')
    }
  })

  it("uses the brand mark from @lobehub/icons-static-svg where the package has one", async () => {
    const Fs = await import("node:fs")
    const { createRequire } = await import("node:module")
    const require = createRequire(import.meta.url)
    for (const id of BRANDED) {
      const res = await call(gw.baseUrl, "GET", `/api/providers/${id}/logo`)
      const icon = id === "meta" ? "meta" : id
      const source = Fs.readFileSync(require.resolve(`@lobehub/icons-static-svg/icons/${icon}.svg`), "utf8")
      const firstPath = /<path[^>]*d="([^"]{20,})"/.exec(source)?.[1]
      expect(firstPath, id).toBeDefined()
      expect(res.text, id).toContain(firstPath)
      expect(res.text, id).not.toContain("<text")
    }
  })

  it("draws a neutral monogram tile for vendors without a brand mark", async () => {
    const expected: Record<string, string> = { deepgram: "DE", cartesia: "CA", spitch: "SP" }
    for (const id of MONOGRAM) {
      const res = await call(gw.baseUrl, "GET", `/api/providers/${id}/logo`)
      expect(res.status).toBe(200)
      expect(res.text).toContain(`>${expected[id]}</text>`)
    }
  })

  it("answers 404 in the flat envelope for an unknown provider id", async () => {
    const res = await call(gw.baseUrl, "GET", "/api/providers/acme/logo")
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ error: "not_found", message: expect.any(String), request_id: res.headers.get("x-request-id") })
  })
})
