/**
 * Voice wire shapes (contract §4.8): the TTS JSON request, the STT multipart fields, the transcription answers and
 * the registry documents of the GET endpoints. Requests are validated by the voice service against the registry
 * (so every violation is a flat 400 `bad_request`); these schemas document them.
 */
import { HttpApiSchema, Multipart } from "@effect/platform"
import { Schema } from "effect"

export const SpeechRequest = Schema.Struct({
  input: Schema.String.annotations({ description: "Text to speak, at most 4096 characters" }),
  model: Schema.optional(Schema.String).annotations({ description: "Default `tts-1`; `auto` / `service-auto` routes to a BYOK model" }),
  voice: Schema.optional(Schema.String).annotations({ description: "Falls back to the model's default voice when it does not belong to the model" }),
  response_format: Schema.optional(Schema.Literal("mp3", "opus", "aac", "flac", "wav", "pcm")),
  speed: Schema.optional(Schema.Number.annotations({ description: "0.25 to 4.0" })),
  language: Schema.optional(Schema.String).annotations({ description: "Regional provider: en, yo, ha, ig, am" }),
  stream: Schema.optional(Schema.Boolean)
}).annotations({ identifier: "SpeechRequest" })

export const TranscriptionRequest = HttpApiSchema.Multipart(
  Schema.Struct({
    file: Multipart.SingleFileSchema.annotations({ description: "Audio file, at most 25 MB" }),
    model: Schema.optional(Schema.String),
    language: Schema.optional(Schema.String),
    prompt: Schema.optional(Schema.String),
    temperature: Schema.optional(Schema.String).annotations({ description: "0 to 1, general-purpose provider only" }),
    diarize: Schema.optional(Schema.String).annotations({ description: "`true` for speaker labels" }),
    response_format: Schema.optional(Schema.Literal("json", "text", "srt", "vtt", "verbose_json")),
    provider: Schema.optional(Schema.String)
  }).annotations({ identifier: "TranscriptionRequest" })
)

const Speaker = Schema.Union(Schema.String, Schema.Number)

export const TranscriptionJson = Schema.Struct({ text: Schema.String }).annotations({ identifier: "Transcription" })

export const TranscriptionVerbose = Schema.Struct({
  text: Schema.String,
  language: Schema.NullOr(Schema.String),
  duration: Schema.NullOr(Schema.Number),
  provider: Schema.String,
  model: Schema.String,
  segments: Schema.Array(Schema.Struct({
    id: Schema.Number,
    start: Schema.Number,
    end: Schema.Number,
    text: Schema.String,
    speaker: Schema.optional(Speaker)
  })),
  words: Schema.Array(Schema.Struct({
    word: Schema.String,
    start: Schema.Number,
    end: Schema.Number,
    speaker: Schema.optional(Speaker)
  }))
}).annotations({ identifier: "TranscriptionVerbose" })

const Pricing = Schema.Struct({
  per_1k_chars_usd: Schema.optional(Schema.NullOr(Schema.Number)),
  per_minute_usd: Schema.optional(Schema.NullOr(Schema.Number)),
  pricing_status: Schema.String,
  confirmed: Schema.Boolean,
  source: Schema.String
})

const Strings = Schema.Array(Schema.String)

export const VoicesDocument = Schema.Struct({
  object: Schema.Literal("list"),
  data: Schema.Array(Schema.Struct({
    model: Schema.String,
    provider: Schema.String,
    voices: Strings,
    default_voice: Schema.NullOr(Schema.String),
    voice_id_pattern: Schema.NullOr(Schema.String),
    formats: Strings,
    max_input_chars: Schema.Number,
    languages: Schema.NullOr(Strings),
    voice_languages: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String }))
  }))
}).annotations({ identifier: "VoiceRegistry" })

export const SpeechDocument = Schema.Struct({
  object: Schema.Literal("speech.capabilities"),
  default_model: Schema.String,
  auto: Schema.Struct({ aliases: Strings, order: Strings, key_source: Schema.String }),
  models: Schema.Array(Schema.Struct({
    id: Schema.String,
    provider: Schema.String,
    formats: Strings,
    default_voice: Schema.NullOr(Schema.String),
    voices: Strings,
    max_input_chars: Schema.Number,
    supports_streaming: Schema.Boolean,
    supports_speed: Schema.Boolean,
    languages: Schema.NullOr(Strings),
    pricing: Pricing
  })),
  formats: Schema.Array(Schema.Struct({ format: Schema.String, content_type: Schema.String })),
  default_format: Schema.String,
  limits: Schema.Struct({
    max_input_chars: Schema.Number,
    speed: Schema.Struct({ min: Schema.Number, max: Schema.Number, default: Schema.Number }),
    requests_per_minute: Schema.Number
  })
}).annotations({ identifier: "SpeechCapabilities" })

export const TranscriptionDocument = Schema.Struct({
  object: Schema.Literal("transcription.capabilities"),
  default_model: Schema.String,
  models: Schema.Array(Schema.Struct({
    id: Schema.String,
    provider: Schema.String,
    description: Schema.String,
    diarization: Schema.Boolean,
    word_timestamps: Schema.Boolean,
    supports_prompt: Schema.Boolean,
    supports_temperature: Schema.Boolean,
    languages: Schema.NullOr(Strings),
    pricing: Pricing
  })),
  containers: Schema.Array(Schema.Struct({ container: Schema.String, mime_types: Strings, extensions: Strings })),
  response_formats: Schema.Array(Schema.Struct({ format: Schema.String, content_type: Schema.String })),
  default_response_format: Schema.String,
  max_file_size_bytes: Schema.Number,
  limits: Schema.Struct({
    max_file_size_bytes: Schema.Number,
    temperature: Schema.Struct({ min: Schema.Number, max: Schema.Number }),
    provider_timeout_seconds: Schema.Number,
    requests_per_minute: Schema.Number
  })
}).annotations({ identifier: "TranscriptionCapabilities" })
