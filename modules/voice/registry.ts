/**
 * The voice registry: every TTS and STT model with its provider, voices, formats, limits and unit price. The
 * GET endpoints publish it and request validation reads it, so what is advertised is exactly what is accepted.
 *
 * Prices are provider list prices (per 1,000 characters for TTS, per minute of audio for STT), passed through
 * without markup. Sources: OpenAI, Deepgram, ElevenLabs and AssemblyAI pricing pages as gathered in
 * `shared/reference/providers.md` (2026 snapshots); Aura-1 and Cartesia are UNCONFIRMED third-party figures;
 * Spitch publishes none, so its models are unpriced (cost null, refused on credit-gated projects).
 */

/** `local` is the keyless `espeak-ng` model, present only when the binary runs on the server. */
export type VoiceProvider = "openai" | "deepgram" | "cartesia" | "elevenlabs" | "assemblyai" | "spitch" | "local"

export const SPEECH_FORMATS = ["mp3", "opus", "aac", "flac", "wav", "pcm"] as const
export type SpeechFormat = (typeof SPEECH_FORMATS)[number]

/** Content-Type of each TTS format (contract §4.8). */
export const SPEECH_CONTENT_TYPES: Readonly<Record<SpeechFormat, string>> = {
  mp3: "audio/mpeg",
  opus: "audio/opus",
  aac: "audio/aac",
  flac: "audio/flac",
  wav: "audio/wav",
  pcm: "audio/pcm"
}

export interface UnitPrice {
  /** USD; null when the provider publishes no price we trust (usage recorded as `unpriced`). */
  readonly usd: number | null
  readonly unit: "1k_chars" | "minute"
  readonly source: string
  readonly confirmed: boolean
}

export interface SpeechModel {
  readonly id: string
  readonly provider: VoiceProvider
  readonly family: "openai" | "aura" | "sonic" | "regional" | "eleven" | "local"
  /** Named voices; for providers with account-specific voice ids, the well-known ones. */
  readonly voices: ReadonlyArray<string>
  /** Voice used when none is given or the given one does not belong to the model; null when baked in. */
  readonly defaultVoice: string | null
  /** Voice ids outside `voices` that the provider accepts (its id format), or null. */
  readonly voiceIdPattern: RegExp | null
  readonly formats: ReadonlyArray<SpeechFormat>
  readonly maxInputChars: number
  readonly supportsStreaming: boolean
  readonly supportsSpeed: boolean
  /** Accepted `language` values; null when the field is passed through as a hint or ignored. */
  readonly languages: ReadonlyArray<string> | null
  readonly price: UnitPrice
}

export interface TranscriptionModel {
  readonly id: string
  readonly provider: VoiceProvider
  readonly description: string
  readonly diarization: boolean
  readonly wordTimestamps: boolean
  /** `prompt` and `temperature` are honoured by the general-purpose provider only. */
  readonly promptAndTemperature: boolean
  readonly languages: ReadonlyArray<string> | null
  readonly defaultLanguage: string | null
  readonly price: UnitPrice
}

export const MAX_INPUT_CHARS = 4096
export const SPEED_RANGE = { min: 0.25, max: 4.0 } as const
export const TEMPERATURE_RANGE = { min: 0, max: 1 } as const
/** 25 MB as the general-purpose provider counts it (25 MiB). */
export const MAX_FILE_BYTES = 25 * 1024 * 1024

const OPENAI_VOICES = ["alloy", "echo", "fable", "onyx", "nova", "shimmer"]
const CARTESIA_VOICES = [
  "694f9389-aac1-45b6-b726-9d9369183238",
  "a0e99841-438c-4a64-b679-ae501e7d6091",
  "79a125e8-cd45-4c13-8a67-188112f4dd22"
]
const ELEVEN_VOICES = ["21m00Tcm4TlvDq8ikWAM", "EXAVITQu4vr4xnSDxMaL", "JBFqnCBsd6RMkjVDRZzb", "pNInz6obpgDQGcFmaJgB"]

/** Regional (Spitch) voices and the language each speaks. */
export const REGIONAL_VOICE_LANGUAGES: Readonly<Record<string, string>> = {
  sade: "yo",
  funmi: "yo",
  segun: "yo",
  femi: "yo",
  amina: "ha",
  aliyu: "ha",
  hasan: "ha",
  ngozi: "ig",
  amara: "ig",
  obinna: "ig",
  henry: "en",
  kani: "en",
  hana: "am",
  tesfaye: "am"
}
export const REGIONAL_LANGUAGES = ["en", "yo", "ha", "ig", "am"] as const

const price = (usd: number | null, unit: UnitPrice["unit"], source: string, confirmed = true): UnitPrice => ({
  usd,
  unit,
  source,
  confirmed
})

const openaiTts = (id: string, usd: number): SpeechModel => ({
  id,
  provider: "openai",
  family: "openai",
  voices: OPENAI_VOICES,
  defaultVoice: "alloy",
  voiceIdPattern: null,
  formats: ["mp3", "opus", "aac", "flac", "wav", "pcm"],
  maxInputChars: MAX_INPUT_CHARS,
  supportsStreaming: true,
  supportsSpeed: true,
  languages: null,
  price: price(usd, "1k_chars", "openai.com/api/pricing")
})

const aura = (name: string): SpeechModel => ({
  id: `aura-${name}-en`,
  provider: "deepgram",
  family: "aura",
  voices: [],
  defaultVoice: null,
  voiceIdPattern: null,
  formats: ["mp3", "opus", "aac", "flac", "wav", "pcm"],
  maxInputChars: MAX_INPUT_CHARS,
  supportsStreaming: true,
  supportsSpeed: false,
  languages: null,
  price: price(0.015, "1k_chars", "deepgram.com/pricing (Aura-1, third-party figure)", false)
})

const sonic = (id: string): SpeechModel => ({
  id,
  provider: "cartesia",
  family: "sonic",
  voices: CARTESIA_VOICES,
  defaultVoice: CARTESIA_VOICES[0] ?? null,
  voiceIdPattern: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
  formats: ["mp3", "wav", "pcm"],
  maxInputChars: MAX_INPUT_CHARS,
  supportsStreaming: true,
  supportsSpeed: false,
  languages: null,
  price: price(0.05, "1k_chars", "third-party estimate for Cartesia Sonic", false)
})

const eleven = (id: string, usd: number): SpeechModel => ({
  id,
  provider: "elevenlabs",
  family: "eleven",
  voices: ELEVEN_VOICES,
  defaultVoice: ELEVEN_VOICES[0] ?? null,
  voiceIdPattern: /^[A-Za-z0-9]{20}$/,
  formats: ["mp3", "opus", "wav", "pcm"],
  maxInputChars: MAX_INPUT_CHARS,
  supportsStreaming: true,
  supportsSpeed: false,
  languages: null,
  price: price(usd, "1k_chars", "elevenlabs.io/pricing/api")
})

export const SPEECH_MODELS: ReadonlyArray<SpeechModel> = [
  openaiTts("tts-1", 0.015),
  openaiTts("tts-1-hd", 0.03),
  ...["asteria", "luna", "stella", "athena", "hera", "orion", "arcas", "perseus", "angus", "orpheus", "helios", "zeus"]
    .map(aura),
  sonic("sonic-2"),
  sonic("sonic-english"),
  {
    id: "regional-tts",
    provider: "spitch",
    family: "regional",
    voices: Object.keys(REGIONAL_VOICE_LANGUAGES),
    defaultVoice: "sade",
    voiceIdPattern: null,
    formats: ["mp3", "opus", "flac", "wav", "pcm"],
    maxInputChars: MAX_INPUT_CHARS,
    supportsStreaming: true,
    supportsSpeed: true,
    languages: REGIONAL_LANGUAGES,
    price: price(null, "1k_chars", "Spitch publishes no price", false)
  },
  eleven("eleven_turbo_v2_5", 0.05),
  eleven("eleven_flash_v2_5", 0.05),
  eleven("eleven_multilingual_v2", 0.1)
]

/**
 * Local speech with `espeak-ng` (22.05 kHz mono WAV or raw PCM): no key, no provider charge. Listed only when the
 * binary runs; it also answers a request without `model` when the general-purpose provider has no key.
 */
export const LOCAL_SPEECH_MODEL: SpeechModel = {
  id: "espeak-ng",
  provider: "local",
  family: "local",
  voices: ["en", "en-us", "en-gb", "de", "es", "it", "pt", "sw", "am"],
  defaultVoice: "en",
  voiceIdPattern: /^[a-z]{2,3}(-[a-z0-9]{1,8}){0,3}$/,
  formats: ["wav", "pcm"],
  maxInputChars: MAX_INPUT_CHARS,
  supportsStreaming: true,
  supportsSpeed: true,
  languages: null,
  price: price(0, "1k_chars", "runs on the gateway; no provider charge")
}

export const DEFAULT_SPEECH_MODEL = "tts-1"
export const AUTO_MODEL_IDS = ["auto", "service-auto"] as const

/** The auto-router's latency order (contract §4.8): first usable BYOK model wins. */
export const AUTO_ORDER: ReadonlyArray<SpeechModel["family"]> = ["openai", "aura", "sonic", "regional", "eleven"]
export const autoCandidates: ReadonlyArray<SpeechModel> = AUTO_ORDER.flatMap((family) =>
  SPEECH_MODELS.filter((model) => model.family === family)
)

export const TRANSCRIPTION_MODELS: ReadonlyArray<TranscriptionModel> = [
  {
    id: "whisper-1",
    provider: "openai",
    description: "general-purpose",
    diarization: false,
    wordTimestamps: true,
    promptAndTemperature: true,
    languages: null,
    defaultLanguage: null,
    price: price(0.006, "minute", "openai.com/api/pricing")
  },
  {
    id: "nova-3",
    provider: "deepgram",
    description: "diarization, word timestamps",
    diarization: true,
    wordTimestamps: true,
    promptAndTemperature: false,
    languages: null,
    defaultLanguage: null,
    price: price(0.0043, "minute", "deepgram.com/pricing (pre-recorded)")
  },
  {
    id: "transcribe-universal",
    provider: "assemblyai",
    description: "diarization, long-form",
    diarization: true,
    wordTimestamps: true,
    promptAndTemperature: false,
    languages: null,
    defaultLanguage: null,
    price: price(0.0025, "minute", "assemblyai.com/pricing (Universal-2)")
  },
  {
    id: "regional-stt",
    provider: "spitch",
    description: "African languages",
    diarization: false,
    wordTimestamps: true,
    promptAndTemperature: false,
    languages: REGIONAL_LANGUAGES,
    defaultLanguage: "en",
    price: price(null, "minute", "Spitch publishes no price", false)
  }
]

export const DEFAULT_TRANSCRIPTION_MODEL = "whisper-1"

export const TRANSCRIPTION_FORMATS = ["json", "text", "srt", "vtt", "verbose_json"] as const
export type TranscriptionFormat = (typeof TRANSCRIPTION_FORMATS)[number]

export const TRANSCRIPTION_CONTENT_TYPES: Readonly<Record<TranscriptionFormat, string>> = {
  json: "application/json",
  verbose_json: "application/json",
  text: "text/plain; charset=utf-8",
  srt: "application/x-subrip",
  vtt: "text/vtt; charset=utf-8"
}

export interface AudioContainer {
  readonly container: string
  readonly mimeTypes: ReadonlyArray<string>
  readonly extensions: ReadonlyArray<string>
}

/** Accepted upload containers; browser recordings arrive as `audio/webm;codecs=opus` or `audio/mp4`. */
export const AUDIO_CONTAINERS: ReadonlyArray<AudioContainer> = [
  { container: "mp3", mimeTypes: ["audio/mpeg", "audio/mp3", "audio/mpga", "audio/x-mpeg"], extensions: ["mp3", "mpga", "mpeg"] },
  { container: "wav", mimeTypes: ["audio/wav", "audio/x-wav", "audio/wave", "audio/vnd.wave"], extensions: ["wav"] },
  { container: "webm", mimeTypes: ["audio/webm", "video/webm"], extensions: ["webm"] },
  { container: "mp4", mimeTypes: ["audio/mp4", "video/mp4"], extensions: ["mp4"] },
  { container: "m4a", mimeTypes: ["audio/m4a", "audio/x-m4a"], extensions: ["m4a"] },
  { container: "ogg", mimeTypes: ["audio/ogg", "application/ogg", "audio/opus"], extensions: ["ogg", "oga", "opus"] },
  { container: "flac", mimeTypes: ["audio/flac", "audio/x-flac"], extensions: ["flac"] }
]

/** The canonical MIME type sent upstream for each container. */
export const CONTAINER_MIME: Readonly<Record<string, string>> = {
  mp3: "audio/mpeg",
  wav: "audio/wav",
  webm: "audio/webm",
  mp4: "audio/mp4",
  m4a: "audio/mp4",
  ogg: "audio/ogg",
  flac: "audio/flac"
}

/** The container of an upload: by MIME type first (parameters such as `codecs=opus` ignored), then extension. */
export const containerOf = (mimeType: string | undefined, fileName: string | undefined): AudioContainer | undefined => {
  const mime = (mimeType ?? "").split(";")[0]?.trim().toLowerCase() ?? ""
  const byMime = AUDIO_CONTAINERS.find((c) => c.mimeTypes.includes(mime))
  if (byMime) return byMime
  const extension = (fileName ?? "").toLowerCase().match(/\.([a-z0-9]+)$/)?.[1]
  return extension === undefined ? undefined : AUDIO_CONTAINERS.find((c) => c.extensions.includes(extension))
}

/** The speech models this server offers: the providers' models, plus the local one when it is available. */
export const availableSpeechModels = (local: boolean): ReadonlyArray<SpeechModel> =>
  local ? [...SPEECH_MODELS, LOCAL_SPEECH_MODEL] : SPEECH_MODELS
export const transcriptionModel = (id: string) => TRANSCRIPTION_MODELS.find((model) => model.id === id)

/** The voice a request gets: its own when it belongs to the model, else the model's default. */
export const resolveVoice = (model: SpeechModel, voice: string | undefined): string | null => {
  if (voice !== undefined && (model.voices.includes(voice) || model.voiceIdPattern?.test(voice) === true)) return voice
  return model.defaultVoice
}

const pricing = (p: UnitPrice) => ({
  [p.unit === "minute" ? "per_minute_usd" : "per_1k_chars_usd"]: p.usd,
  pricing_status: p.usd === null ? "unpriced" : "priced",
  confirmed: p.confirmed,
  source: p.source
})

/** `GET /api/ai/audio/voices`. */
export const voicesDocument = (models: ReadonlyArray<SpeechModel>) => ({
  object: "list" as const,
  data: models.map((model) => ({
    model: model.id,
    provider: model.provider,
    voices: [...model.voices],
    default_voice: model.defaultVoice,
    voice_id_pattern: model.voiceIdPattern?.source ?? null,
    formats: [...model.formats],
    max_input_chars: model.maxInputChars,
    languages: model.languages === null ? null : [...model.languages],
    ...(model.family === "regional" ? { voice_languages: { ...REGIONAL_VOICE_LANGUAGES } } : {})
  }))
})

/** `GET /api/ai/audio/speech`. */
export const speechDocument = (models: ReadonlyArray<SpeechModel>, rateLimitPerMinute: number) => ({
  object: "speech.capabilities" as const,
  default_model: DEFAULT_SPEECH_MODEL,
  auto: { aliases: [...AUTO_MODEL_IDS], order: autoCandidates.map((m) => m.id), key_source: "byok" },
  models: models.map((model) => ({
    id: model.id,
    provider: model.provider,
    formats: [...model.formats],
    default_voice: model.defaultVoice,
    voices: [...model.voices],
    max_input_chars: model.maxInputChars,
    supports_streaming: model.supportsStreaming,
    supports_speed: model.supportsSpeed,
    languages: model.languages === null ? null : [...model.languages],
    pricing: pricing(model.price)
  })),
  formats: SPEECH_FORMATS.map((format) => ({ format, content_type: SPEECH_CONTENT_TYPES[format] })),
  default_format: "mp3",
  limits: {
    max_input_chars: MAX_INPUT_CHARS,
    speed: { min: SPEED_RANGE.min, max: SPEED_RANGE.max, default: 1 },
    requests_per_minute: rateLimitPerMinute
  }
})

/** `GET /api/ai/audio/transcriptions`. */
export const transcriptionDocument = (rateLimitPerMinute: number, timeoutMs: number) => ({
  object: "transcription.capabilities" as const,
  default_model: DEFAULT_TRANSCRIPTION_MODEL,
  models: TRANSCRIPTION_MODELS.map((model) => ({
    id: model.id,
    provider: model.provider,
    description: model.description,
    diarization: model.diarization,
    word_timestamps: model.wordTimestamps,
    supports_prompt: model.promptAndTemperature,
    supports_temperature: model.promptAndTemperature,
    languages: model.languages === null ? null : [...model.languages],
    pricing: pricing(model.price)
  })),
  containers: AUDIO_CONTAINERS.map((c) => ({
    container: c.container,
    mime_types: [...c.mimeTypes],
    extensions: [...c.extensions]
  })),
  response_formats: TRANSCRIPTION_FORMATS.map((format) => ({ format, content_type: TRANSCRIPTION_CONTENT_TYPES[format] })),
  default_response_format: "json",
  max_file_size_bytes: MAX_FILE_BYTES,
  limits: {
    max_file_size_bytes: MAX_FILE_BYTES,
    temperature: { min: TEMPERATURE_RANGE.min, max: TEMPERATURE_RANGE.max },
    provider_timeout_seconds: Math.round(timeoutMs / 1000),
    requests_per_minute: rateLimitPerMinute
  }
})
