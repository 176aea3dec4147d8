/**
 * The shape of a catalog entry as the gateway uses it (billing, routing, listing). The public catalog row of
 * contract §2.10 is this plus `provider_logo_url`.
 */

/** Contract §2.10 types for text and image models, plus `tts` and `stt` for voice models. */
export type ModelType = "chat" | "reasoning" | "code" | "search" | "vision" | "image" | "tts" | "stt"

export const CAPABILITIES = [
  "reasoning",
  "vision",
  "code",
  "search",
  "image",
  "tools",
  "structuredOutput",
  "fileInput",
  "videoInput",
  "audioInput",
  "caching"
] as const

export type Capability = (typeof CAPABILITIES)[number]

export type Capabilities = { readonly [K in Capability]: boolean }

export interface Pricing {
  /** USD per million input tokens; null when the model is not priced per token or its price is unknown. */
  readonly input_per_million: number | null
  readonly output_per_million: number | null
  readonly cached_input_per_million: number | null
  readonly currency: "USD"
  readonly input_display: string
  readonly output_display: string
  /** Image models bill per image: `per_image` true, `per_image_usd` set, `output_display` `per img`. */
  readonly per_image: boolean
  readonly per_image_usd: number | null
  /** Text-to-speech: USD per 1,000 input characters. */
  readonly per_1k_chars: number | null
  /** Speech-to-text: USD per minute of audio. */
  readonly per_minute: number | null
}

export interface PriceSource {
  /** Which data set or page the price came from, e.g. `@pydantic/genai-prices 0.1.8` or `catalog overlay`. */
  readonly name: string
  readonly url?: string | undefined
  /** The date of the data (ISO date). */
  readonly updated_at: string
  /** Caveat a reviewer recorded, e.g. that a figure is third-party and unconfirmed. */
  readonly note?: string | undefined
}

export interface CatalogModel {
  readonly id: string
  readonly name: string
  /** Provider id, one of the catalog providers (`openai`, `spitch`, ...). */
  readonly provider: string
  readonly provider_name: string
  readonly description: string
  readonly type: ModelType
  readonly types: ReadonlyArray<ModelType>
  /** Tokens; 0 when not applicable or unknown. */
  readonly context_window: number
  readonly context_display: string
  readonly capabilities: Capabilities
  readonly pricing: Pricing
  /** `unpriced` when no trustworthy price is known: prices are then null, never 0. */
  readonly pricing_status: "priced" | "unpriced"
  readonly price_source: PriceSource | null
  readonly status: "active" | "deprecated"
  /** Release date (ISO date) when known. */
  readonly released_at: string | null
}

export interface CatalogProvider {
  readonly id: string
  readonly name: string
  readonly website: string
  readonly docs_url: string
  readonly model_count: number
}

export interface ModelFilter {
  /** Provider id, case-insensitive. */
  readonly provider?: string | undefined
  readonly type?: string | undefined
  /** Case-insensitive substring of name, id, provider (id or name) or description. */
  readonly search?: string | undefined
  /** Every listed capability must be true. */
  readonly capabilities?: ReadonlyArray<string> | undefined
}
