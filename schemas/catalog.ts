/** Catalog and model-listing shapes (contract §2.3 UnifiedModel and ModelList, §2.10 catalog rows). */
import { Schema } from "effect"

export const CapabilitiesSchema = Schema.Struct({
  reasoning: Schema.Boolean,
  vision: Schema.Boolean,
  code: Schema.Boolean,
  search: Schema.Boolean,
  image: Schema.Boolean,
  tools: Schema.Boolean,
  structuredOutput: Schema.Boolean,
  fileInput: Schema.Boolean,
  videoInput: Schema.Boolean,
  audioInput: Schema.Boolean,
  caching: Schema.Boolean
})

export const PricingSchema = Schema.Struct({
  /** USD per million input tokens; null when not priced per token or unknown (see `pricing_status`). */
  input_per_million: Schema.NullOr(Schema.Number),
  output_per_million: Schema.NullOr(Schema.Number),
  cached_input_per_million: Schema.NullOr(Schema.Number),
  currency: Schema.String,
  input_display: Schema.String,
  output_display: Schema.String,
  per_image: Schema.Boolean,
  per_image_usd: Schema.NullOr(Schema.Number),
  /** Text-to-speech models: USD per 1,000 characters. */
  per_1k_chars: Schema.NullOr(Schema.Number),
  /** Speech-to-text models: USD per minute of audio. */
  per_minute: Schema.NullOr(Schema.Number)
})

export const PriceSourceSchema = Schema.Struct({
  name: Schema.String,
  url: Schema.optional(Schema.String),
  updated_at: Schema.String,
  note: Schema.optional(Schema.String)
})

export const CatalogModelRow = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  provider: Schema.String,
  provider_name: Schema.String,
  provider_logo_url: Schema.String,
  /** `chat`, `reasoning`, `code`, `search`, `vision`, `image`; voice models are `tts` or `stt`. */
  type: Schema.String,
  types: Schema.Array(Schema.String),
  context_window: Schema.Int,
  context_display: Schema.String,
  description: Schema.String,
  capabilities: CapabilitiesSchema,
  pricing: PricingSchema,
  pricing_status: Schema.Literal("priced", "unpriced"),
  price_source: Schema.NullOr(PriceSourceSchema),
  status: Schema.String,
  released_at: Schema.NullOr(Schema.String)
}).annotations({ identifier: "CatalogModel" })

export const CatalogModelList = Schema.Struct({
  object: Schema.Literal("list"),
  data: Schema.Array(CatalogModelRow),
  total: Schema.Int
}).annotations({ identifier: "CatalogModelList" })

export const CatalogProviderRow = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  logo_url: Schema.String,
  website: Schema.String,
  docs_url: Schema.String,
  model_count: Schema.Int
}).annotations({ identifier: "CatalogProvider" })

export const CatalogProviderList = Schema.Struct({
  object: Schema.Literal("list"),
  data: Schema.Array(CatalogProviderRow),
  total: Schema.Int
}).annotations({ identifier: "CatalogProviderList" })

/** Query of `GET /api/models`; `capability` may repeat and each value may be comma-separated. */
export const CatalogModelQuery = Schema.Struct({
  provider: Schema.optional(Schema.String),
  type: Schema.optional(Schema.String),
  search: Schema.optional(Schema.String),
  capability: Schema.optional(Schema.Union(Schema.String, Schema.Array(Schema.String)))
})

export const UnifiedModel = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("model"),
  created: Schema.Int,
  owned_by: Schema.String,
  name: Schema.String,
  type: Schema.String,
  types: Schema.Array(Schema.String),
  context_window: Schema.Int,
  provider: Schema.String,
  source: Schema.Literal("service", "byok", "custom"),
  connection_id: Schema.NullOr(Schema.String),
  status: Schema.String,
  available: Schema.Boolean,
  unavailable_reason: Schema.NullOr(Schema.String),
  pricing_status: Schema.String
}).annotations({ identifier: "UnifiedModel" })

export const ModelList = Schema.Struct({
  object: Schema.Literal("list"),
  data: Schema.Array(UnifiedModel),
  /** Filtered rows (connection variants count as rows). */
  total: Schema.Int,
  /** Unique model ids among the filtered rows. */
  distinct_model_ids: Schema.Int,
  next_cursor: Schema.NullOr(Schema.String),
  /** True when a source failed or timed out, so the list is incomplete. */
  partial: Schema.Boolean,
  providers: Schema.Array(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
}).annotations({ identifier: "ModelList" })

/** Query of `GET /api/v1/models`. Without `limit` every row is returned on one page (OpenAI SDK compatible). */
export const ModelListQuery = Schema.Struct({
  provider: Schema.optional(Schema.String),
  limit: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 1000))),
  cursor: Schema.optional(Schema.String)
})
