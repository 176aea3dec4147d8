/**
 * Cost of one call from catalog prices. Managed keys pass the provider cost through plus the project's markup;
 * BYOK and custom providers carry no service charge. An unknown price is `null`, never 0.
 */
export type KeySource = "managed" | "byok" | "custom" | "local"

export interface UnitPrices {
  readonly input_per_million?: number | null | undefined
  readonly output_per_million?: number | null | undefined
  readonly cached_input_per_million?: number | null | undefined
  readonly per_1k_chars?: number | null | undefined
  readonly per_minute?: number | null | undefined
  readonly per_image_usd?: number | null | undefined
}

export interface Consumption {
  readonly promptTokens?: number
  readonly completionTokens?: number
  readonly cachedTokens?: number
  readonly characters?: number
  readonly audioSeconds?: number
  readonly images?: number
}

export interface Cost {
  readonly providerCostUsd: number | null
  readonly serviceChargeUsd: number
  readonly markupPercentage: number
}

const round = (usd: number) => Math.round(usd * 1e8) / 1e8

/** Provider cost of `use` at `prices`; null when a consumed unit has no known price. */
export const providerCost = (prices: UnitPrices | null, use: Consumption): number | null => {
  if (prices === null) return null
  let total = 0
  const add = (quantity: number | undefined, price: number | null | undefined, per: number): boolean => {
    if (!quantity) return true
    if (price === null || price === undefined) return false
    total += (quantity * price) / per
    return true
  }
  const cached = use.cachedTokens ?? 0
  const uncachedPrompt = Math.max(0, (use.promptTokens ?? 0) - cached)
  const cachedPrice = prices.cached_input_per_million ?? prices.input_per_million
  const known = add(uncachedPrompt, prices.input_per_million, 1e6) &&
    add(cached, cachedPrice, 1e6) &&
    add(use.completionTokens, prices.output_per_million, 1e6) &&
    add(use.characters, prices.per_1k_chars, 1e3) &&
    add(use.audioSeconds, prices.per_minute, 60) &&
    add(use.images, prices.per_image_usd, 1)
  return known ? round(total) : null
}

/** The bill of a call: what the provider charges, what the gateway adds, and the markup applied. */
export const costOf = (options: {
  readonly prices: UnitPrices | null
  readonly use: Consumption
  readonly keySource: KeySource
  /** The project's markup; voice passes 0 (provider cost through without markup). */
  readonly markupPercentage: number
}): Cost => {
  const cost = providerCost(options.prices, options.use)
  if (options.keySource !== "managed") {
    return { providerCostUsd: cost, serviceChargeUsd: 0, markupPercentage: 0 }
  }
  return {
    providerCostUsd: cost,
    serviceChargeUsd: cost === null ? 0 : round((cost * options.markupPercentage) / 100),
    markupPercentage: options.markupPercentage
  }
}

/** What a call debits from a credit-gated project's balance: managed calls only. */
export const billedAmount = (cost: Cost, keySource: KeySource): number =>
  keySource === "managed" ? round((cost.providerCostUsd ?? 0) + cost.serviceChargeUsd) : 0
