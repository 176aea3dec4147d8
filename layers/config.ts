/**
 * Configuration, read once through Effect `Config` so tests swap it with a `ConfigProvider`.
 * Every variable is listed in the README's configuration table.
 */
import { Config, Context, Layer, LogLevel, Option, Redacted } from "effect"

/** Upstream providers with a managed key (`<ID>_API_KEY`) and a base URL override (`<ID>_BASE_URL`). */
export const UPSTREAM_PROVIDERS = [
  { id: "openai", env: "OPENAI", baseUrl: "https://api.openai.com/v1" },
  { id: "anthropic", env: "ANTHROPIC", baseUrl: "https://api.anthropic.com/v1" },
  { id: "google", env: "GOOGLE", baseUrl: "https://generativelanguage.googleapis.com/v1beta" },
  { id: "deepgram", env: "DEEPGRAM", baseUrl: "https://api.deepgram.com" },
  { id: "cartesia", env: "CARTESIA", baseUrl: "https://api.cartesia.ai" },
  { id: "elevenlabs", env: "ELEVENLABS", baseUrl: "https://api.elevenlabs.io" },
  { id: "assemblyai", env: "ASSEMBLYAI", baseUrl: "https://api.assemblyai.com" },
  { id: "spitch", env: "SPITCH", baseUrl: "https://api.spitch.app" },
  { id: "mistral", env: "MISTRAL", baseUrl: "https://api.mistral.ai/v1" },
  { id: "groq", env: "GROQ", baseUrl: "https://api.groq.com/openai/v1" },
  { id: "deepseek", env: "DEEPSEEK", baseUrl: "https://api.deepseek.com/v1" },
  { id: "xai", env: "XAI", baseUrl: "https://api.x.ai/v1" },
  { id: "meta", env: "META", baseUrl: "https://api.llama.com/compat/v1" },
  { id: "cohere", env: "COHERE", baseUrl: "https://api.cohere.ai/compatibility/v1" },
  { id: "perplexity", env: "PERPLEXITY", baseUrl: "https://api.perplexity.ai" },
  { id: "together", env: "TOGETHER", baseUrl: "https://api.together.xyz/v1" },
  { id: "fireworks", env: "FIREWORKS", baseUrl: "https://api.fireworks.ai/inference/v1" }
] as const

export type UpstreamProviderId = (typeof UPSTREAM_PROVIDERS)[number]["id"]

export interface UpstreamSettings {
  readonly apiKey: Option.Option<Redacted.Redacted>
  readonly baseUrl: string
}

export interface AppSettings {
  readonly port: number
  readonly host: string
  readonly databaseUrl: Option.Option<Redacted.Redacted>
  readonly dataDir: string
  readonly masterKey: Option.Option<Redacted.Redacted>
  readonly logLevel: LogLevel.LogLevel
  /** Largest JSON request body accepted, in bytes (413 above it). */
  readonly maxBodyBytes: number
  /** Lifetime of `ect_` client tokens, in seconds. */
  readonly clientTokenTtlSeconds: number
  /** Lifetime of a dashboard session cookie, in seconds. */
  readonly dashboardSessionTtlSeconds: number
  /** Create a default project with printed keys when the database has none. */
  readonly bootstrapDefaultProject: boolean
  /** Send the session cookie with the `Secure` attribute (set behind HTTPS). */
  readonly secureCookies: boolean
  /** Limit for an upstream's response headers and, when streaming, each gap between chunks. */
  readonly upstreamTimeoutMs: number
  /** Retries of a failed upstream call (429, 5xx, timeouts, network) before its first byte reaches the client. */
  readonly upstreamRetries: number
  /** First retry delay; doubles per retry (a `Retry-After` from the upstream takes precedence, up to 10 s). */
  readonly upstreamRetryBaseMs: number
  readonly upstreams: Readonly<Record<UpstreamProviderId, UpstreamSettings>>
  /**
   * Whether custom providers and provider connections may use base URLs on private, loopback or link-local
   * networks. Default true: self-hosted models (Ollama, vLLM, LM Studio) usually live there.
   */
  readonly allowPrivateProviderUrls: boolean
  /** Time limit of a custom-provider test connection, in milliseconds (contract §8: 30 seconds). */
  readonly customProviderTestTimeoutMs: number
  /** Time limit of an upstream model-listing call (connection validation and model sync), in milliseconds. */
  readonly providerListTimeoutMs: number
  /** Time limit of each source of `GET /api/v1/models`; a source over it is skipped and the list is `partial`. */
  readonly modelSourceTimeoutMs: number
  /**
   * Whether the SSRF-safe fetcher (`layers/safe-fetch.ts`, e.g. vision image URLs) may connect to loopback
   * addresses. Default false; tests serve images from 127.0.0.1. Private and link-local networks stay refused.
   */
  readonly safeFetchAllowLoopback: boolean
  /** The vision model when a request names none (contract §4.7). */
  readonly visionDefaultModel: string
  /** Time limit for fetching one image URL (connect, redirects and body), in milliseconds. */
  readonly visionFetchTimeoutMs: number
  readonly voice: VoiceSettings
  readonly sessions: SessionSettings
  readonly queue: QueueSettings
  readonly webhooks: WebhookSettings
}

export interface VoiceSettings {
  /** Upper bound on one upstream voice call, polling included (contract §8: 55 seconds). */
  readonly providerTimeoutMs: number
  /** Pause between transcript polls for providers that transcribe asynchronously (AssemblyAI). */
  readonly pollIntervalMs: number
  /** Voice requests per minute per project, counted in the database across processes (contract §8: 60). */
  readonly rateLimitPerMinute: number
  /** The `espeak-ng` binary for the keyless local TTS model, used when it runs; null turns it off. */
  readonly espeakPath: string | null
}

/** Durable sessions (docs/sessions.md). */
export interface SessionSettings {
  /** Model of a turn that names none. */
  readonly defaultModel: string
  /** A session without activity for this long becomes `completed` (contract §8: 7 days). */
  readonly idleTtlSeconds: number
  /** How often each process sweeps for idle sessions and turns whose owner died. */
  readonly sweepIntervalMs: number
  /** A running turn's lease; its owner renews it every third of this. A turn whose lease ran out is failed. */
  readonly turnLeaseMs: number
  /** How often a stream following a turn run by another process checks the log. */
  readonly streamPollMs: number
}

/** The durable job queue (`layers/queue/`). */
export interface QueueSettings {
  /** Run the job worker fiber in this process (`QUEUE_WORKER_ENABLED`, default true). */
  readonly workerEnabled: boolean
  /** How often an idle worker looks for due jobs, in ms (`QUEUE_POLL_INTERVAL_MS`, default 500). */
  readonly pollIntervalMs: number
  /** Jobs one process runs at once (`QUEUE_CONCURRENCY`, default 16). */
  readonly concurrency: number
  /** Lease of a claimed job, in ms, renewed while it runs; a crashed worker's jobs are retaken after it (`QUEUE_LEASE_MS`, default 30000). */
  readonly leaseMs: number
}

/** Webhook delivery (`modules/webhooks/`). */
export interface WebhookSettings {
  /** Allow targets on private, loopback and link-local addresses (`WEBHOOK_ALLOW_PRIVATE_TARGETS`, default false). */
  readonly allowPrivateTargets: boolean
  /** Time allowed for one delivery attempt, in ms (`WEBHOOK_TIMEOUT_MS`, default 10000). */
  readonly attemptTimeoutMs: number
}

const logLevelConfig = Config.literal("all", "trace", "debug", "info", "warning", "error", "fatal", "none")(
  "LOG_LEVEL"
).pipe(
  Config.withDefault("info" as const),
  Config.map((level) => {
    switch (level) {
      case "all":
        return LogLevel.All
      case "trace":
        return LogLevel.Trace
      case "debug":
        return LogLevel.Debug
      case "info":
        return LogLevel.Info
      case "warning":
        return LogLevel.Warning
      case "error":
        return LogLevel.Error
      case "fatal":
        return LogLevel.Fatal
      case "none":
        return LogLevel.None
    }
  })
)

const upstreamConfig = (env: string, baseUrl: string): Config.Config<UpstreamSettings> =>
  Config.all({
    apiKey: Config.option(Config.redacted(`${env}_API_KEY`)).pipe(
      Config.map(Option.filter((key) => Redacted.value(key).length > 0))
    ),
    baseUrl: Config.string(`${env}_BASE_URL`).pipe(
      Config.withDefault(baseUrl),
      Config.map((url) => url.replace(/\/+$/, ""))
    )
  })

const upstreamsConfig = Config.all(
  Object.fromEntries(UPSTREAM_PROVIDERS.map((p) => [p.id, upstreamConfig(p.env, p.baseUrl)])) as {
    [K in UpstreamProviderId]: Config.Config<UpstreamSettings>
  }
)

export const settingsConfig: Config.Config<AppSettings> = Config.all({
  port: Config.integer("PORT").pipe(Config.validate({ message: "PORT must be 0..65535", validation: (p) => p >= 0 && p <= 65535 }), Config.withDefault(8080)),
  host: Config.string("HOST").pipe(Config.withDefault("0.0.0.0")),
  databaseUrl: Config.option(Config.redacted("DATABASE_URL")).pipe(
    Config.map(Option.filter((url) => Redacted.value(url).length > 0))
  ),
  dataDir: Config.string("DATA_DIR").pipe(Config.withDefault("./.data")),
  masterKey: Config.option(Config.redacted("MASTER_KEY")).pipe(
    Config.map(Option.filter((key) => Redacted.value(key).length > 0))
  ),
  logLevel: logLevelConfig,
  maxBodyBytes: Config.integer("MAX_BODY_BYTES").pipe(Config.withDefault(32 * 1024 * 1024)),
  clientTokenTtlSeconds: Config.integer("CLIENT_TOKEN_TTL_SECONDS").pipe(Config.withDefault(900)),
  dashboardSessionTtlSeconds: Config.integer("DASHBOARD_SESSION_TTL_SECONDS").pipe(
    Config.withDefault(7 * 24 * 3600)
  ),
  bootstrapDefaultProject: Config.boolean("BOOTSTRAP_DEFAULT_PROJECT").pipe(Config.withDefault(true)),
  secureCookies: Config.boolean("SECURE_COOKIES").pipe(Config.withDefault(false)),
  upstreamTimeoutMs: Config.integer("UPSTREAM_TIMEOUT_MS").pipe(Config.withDefault(120_000)),
  upstreamRetries: Config.integer("UPSTREAM_RETRIES").pipe(Config.withDefault(2)),
  upstreamRetryBaseMs: Config.integer("UPSTREAM_RETRY_BASE_MS").pipe(Config.withDefault(250)),
  upstreams: upstreamsConfig,
  allowPrivateProviderUrls: Config.boolean("ALLOW_PRIVATE_PROVIDER_URLS").pipe(Config.withDefault(true)),
  customProviderTestTimeoutMs: Config.integer("CUSTOM_PROVIDER_TEST_TIMEOUT_MS").pipe(Config.withDefault(30_000)),
  providerListTimeoutMs: Config.integer("PROVIDER_LIST_TIMEOUT_MS").pipe(Config.withDefault(30_000)),
  modelSourceTimeoutMs: Config.integer("MODEL_SOURCE_TIMEOUT_MS").pipe(Config.withDefault(5_000)),
  safeFetchAllowLoopback: Config.boolean("SAFE_FETCH_ALLOW_LOOPBACK").pipe(Config.withDefault(false)),
  visionDefaultModel: Config.string("VISION_DEFAULT_MODEL").pipe(Config.withDefault("gpt-4o-mini")),
  visionFetchTimeoutMs: Config.integer("VISION_FETCH_TIMEOUT_MS").pipe(Config.withDefault(15_000)),
  voice: Config.all({
    providerTimeoutMs: Config.integer("VOICE_PROVIDER_TIMEOUT_MS").pipe(Config.withDefault(55_000)),
    pollIntervalMs: Config.integer("VOICE_POLL_INTERVAL_MS").pipe(Config.withDefault(1_000)),
    rateLimitPerMinute: Config.integer("VOICE_RATE_LIMIT_PER_MINUTE").pipe(Config.withDefault(60)),
    espeakPath: Config.string("VOICE_ESPEAK_PATH").pipe(
      Config.withDefault("espeak-ng"),
      Config.map((path) => (path === "" || path === "off" ? null : path))
    )
  }),
  sessions: Config.all({
    defaultModel: Config.string("SESSION_DEFAULT_MODEL").pipe(Config.withDefault("gpt-4o-mini")),
    idleTtlSeconds: Config.integer("SESSION_IDLE_TTL_SECONDS").pipe(Config.withDefault(7 * 24 * 3600)),
    sweepIntervalMs: Config.integer("SESSION_SWEEP_INTERVAL_MS").pipe(Config.withDefault(60_000)),
    turnLeaseMs: Config.integer("SESSION_TURN_LEASE_MS").pipe(Config.withDefault(30_000)),
    streamPollMs: Config.integer("SESSION_STREAM_POLL_MS").pipe(Config.withDefault(1_000))
  }),
  queue: Config.all({
    workerEnabled: Config.boolean("QUEUE_WORKER_ENABLED").pipe(Config.withDefault(true)),
    pollIntervalMs: Config.integer("QUEUE_POLL_INTERVAL_MS").pipe(
      Config.validate({ message: "QUEUE_POLL_INTERVAL_MS must be 10..60000", validation: (n) => n >= 10 && n <= 60_000 }),
      Config.withDefault(500)
    ),
    concurrency: Config.integer("QUEUE_CONCURRENCY").pipe(
      Config.validate({ message: "QUEUE_CONCURRENCY must be 1..256", validation: (n) => n >= 1 && n <= 256 }),
      Config.withDefault(16)
    ),
    leaseMs: Config.integer("QUEUE_LEASE_MS").pipe(
      Config.validate({ message: "QUEUE_LEASE_MS must be 1000..3600000", validation: (n) => n >= 1000 && n <= 3_600_000 }),
      Config.withDefault(30_000)
    )
  }),
  webhooks: Config.all({
    allowPrivateTargets: Config.boolean("WEBHOOK_ALLOW_PRIVATE_TARGETS").pipe(Config.withDefault(false)),
    attemptTimeoutMs: Config.integer("WEBHOOK_TIMEOUT_MS").pipe(
      Config.validate({ message: "WEBHOOK_TIMEOUT_MS must be 100..120000", validation: (n) => n >= 100 && n <= 120_000 }),
      Config.withDefault(10_000)
    )
  })
})

export class AppConfig extends Context.Tag("AppConfig")<AppConfig, AppSettings>() {
  static readonly layer = Layer.effect(AppConfig, settingsConfig)
  static readonly make = (settings: AppSettings) => Layer.succeed(AppConfig, settings)
}
