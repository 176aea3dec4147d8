/** Custom provider shapes (contract §2.10, §4.5). Requests use camelCase as the contract shows them. */
import { Schema } from "effect"

export const ApiFormatSchema = Schema.Literal("openai", "anthropic")

export const CustomModelSummary = Schema.Struct({
  id: Schema.String,
  model_name: Schema.String,
  display_name: Schema.String
})

export const CustomModelDetail = Schema.Struct({
  ...CustomModelSummary.fields,
  is_active: Schema.Boolean
})

const providerFields = {
  id: Schema.String,
  name: Schema.String,
  base_url: Schema.String,
  api_format: ApiFormatSchema,
  is_active: Schema.Boolean,
  /** Whether a key is stored; the key itself is never returned. */
  has_api_key: Schema.Boolean,
  created_at: Schema.String
}

export const CustomProvider = Schema.Struct(providerFields).annotations({ identifier: "CustomProvider" })

export const CustomProviderWithModels = Schema.Struct({
  ...providerFields,
  custom_models: Schema.Array(CustomModelSummary)
}).annotations({ identifier: "CustomProviderWithModels" })

export const CustomProviderDetail = Schema.Struct({
  ...providerFields,
  updated_at: Schema.String,
  custom_models: Schema.Array(CustomModelDetail)
}).annotations({ identifier: "CustomProviderDetail" })

export const CreateCustomProviderRequest = Schema.Struct({
  name: Schema.String,
  baseUrl: Schema.String,
  apiKey: Schema.optional(Schema.String),
  format: ApiFormatSchema,
  models: Schema.optional(Schema.Array(Schema.Struct({
    name: Schema.optional(Schema.String),
    modelId: Schema.String
  })))
})

export const UpdateCustomProviderRequest = Schema.Struct({
  name: Schema.optional(Schema.String),
  baseUrl: Schema.optional(Schema.String),
  isActive: Schema.optional(Schema.Boolean),
  format: Schema.optional(ApiFormatSchema),
  /** Replaces the stored key; null removes it. */
  apiKey: Schema.optional(Schema.NullOr(Schema.String))
})

export const TestConnectionRequest = Schema.Struct({
  provider_id: Schema.optional(Schema.String),
  base_url: Schema.optional(Schema.String),
  api_format: Schema.optional(ApiFormatSchema),
  model: Schema.optional(Schema.String),
  api_key: Schema.optional(Schema.String)
})

export const TestConnectionResult = Schema.Union(
  Schema.Struct({
    success: Schema.Literal(true),
    message: Schema.String,
    latency_ms: Schema.Number,
    response: Schema.Struct({
      model: Schema.String,
      content: Schema.String,
      usage: Schema.Struct({
        prompt_tokens: Schema.Number,
        completion_tokens: Schema.Number,
        total_tokens: Schema.Number
      })
    })
  }),
  Schema.Struct({ success: Schema.Literal(false), error: Schema.String, latency_ms: Schema.Number }),
  Schema.Struct({ success: Schema.Literal(false), error: Schema.String })
).annotations({ identifier: "CustomProviderTestResult" })
