/** Provider connection shapes (contract §2.3): ProviderConnection, ProviderValidation, ModelSync. */
import { Schema } from "effect"

export const ProviderConnection = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("provider_connection"),
  name: Schema.String,
  provider: Schema.String,
  api_format: Schema.String,
  base_url: Schema.NullOr(Schema.String),
  /** `active` (usable for BYOK) or `invalid` (the provider rejected the key at the last validation or sync). */
  status: Schema.String,
  last_tested_at: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  updated_at: Schema.String
}).annotations({ identifier: "ProviderConnection" })

export const CreateProviderConnection = Schema.Struct({
  name: Schema.optional(Schema.String),
  provider: Schema.String,
  api_key: Schema.String,
  base_url: Schema.optional(Schema.NullOr(Schema.String)),
  api_format: Schema.optional(Schema.String)
})

export const ValidateProviderKey = Schema.Struct({
  provider: Schema.String,
  api_key: Schema.String,
  base_url: Schema.optional(Schema.NullOr(Schema.String)),
  api_format: Schema.optional(Schema.String)
})

export const ProviderValidation = Schema.Struct({
  valid: Schema.Boolean,
  provider: Schema.String,
  api_format: Schema.String,
  message: Schema.String,
  models_discovered: Schema.Int
}).annotations({ identifier: "ProviderValidation" })

export const ModelSync = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("model_sync"),
  connection_id: Schema.String,
  /** `completed` or `failed`. */
  status: Schema.String,
  counts: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  changes: Schema.Array(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  error: Schema.NullOr(Schema.String),
  created_at: Schema.String
}).annotations({ identifier: "ModelSync" })
