/**
 * Voice: text-to-speech and speech-to-text routed to the provider the model belongs to (contract §4.8).
 *
 * Every request is validated against the registry before any provider is called (so streamed audio never starts
 * on a request that would have failed), then priced per 1,000 characters or per minute of provider-reported audio,
 * held against a credit-gated balance, sent upstream within the provider timeout, settled and recorded. Managed
 * keys pass the provider cost through without markup; BYOK keys carry no service charge. The per-project rate
 * limit is counted in the database, so it holds across server processes.
 */
import { Duration, Effect, Exit, Option, Redacted, Stream } from "effect"
import { AppConfig, type UpstreamProviderId } from "../../layers/config.ts"
import { ApiError } from "../../schemas/errors.ts"
import { costOf, type Cost, type KeySource, type UnitPrices } from "../usage/cost.ts"
import { Billing, type Hold } from "../usage/Service.ts"
import { VoiceKeys } from "./Keys.ts"
import { speechAdapters, transcriptionAdapters } from "./providers/index.ts"
import { espeakAvailable } from "./providers/local.ts"
import type { AudioFile } from "./providers/types.ts"
import {
  AUTO_MODEL_IDS,
  autoCandidates,
  availableSpeechModels,
  containerOf,
  CONTAINER_MIME,
  DEFAULT_SPEECH_MODEL,
  DEFAULT_TRANSCRIPTION_MODEL,
  MAX_FILE_BYTES,
  MAX_INPUT_CHARS,
  REGIONAL_VOICE_LANGUAGES,
  resolveVoice,
  SPEECH_CONTENT_TYPES,
  SPEECH_FORMATS,
  SPEED_RANGE,
  type SpeechFormat,
  type SpeechModel,
  TEMPERATURE_RANGE,
  TRANSCRIPTION_CONTENT_TYPES,
  TRANSCRIPTION_FORMATS,
  TRANSCRIPTION_MODELS,
  transcriptionModel,
  type TranscriptionFormat,
  type UnitPrice,
  type VoiceProvider
} from "./registry.ts"
import { makeVoiceRepo } from "./Repo.ts"
import { render } from "./transcript.ts"
import { bodyStream, type Upstream, UpstreamError } from "./upstream.ts"

export interface Caller {
  readonly projectId: string
  readonly tenantId: string | null
  readonly requestId: string
}

export interface SpeechAudio {
  readonly provider: VoiceProvider
  readonly model: string
  readonly contentType: string
  readonly audio:
    | { readonly _tag: "buffered"; readonly bytes: Uint8Array }
    | { readonly _tag: "streaming"; readonly stream: Stream.Stream<Uint8Array, UpstreamError> }
}

export interface TranscriptionUpload {
  readonly fields: Readonly<Record<string, string>>
  readonly file: { readonly fileName: string; readonly mimeType: string; readonly bytes: Uint8Array<ArrayBuffer> } | undefined
}

export interface TranscriptionResult {
  readonly provider: VoiceProvider
  readonly model: string
  readonly contentType: string
  readonly body: { readonly kind: "json"; readonly body: unknown } | { readonly kind: "text"; readonly body: string }
}

export const badRequest = (message: string, param?: string) =>
  ApiError.badRequest(message, { code: "bad_request", ...(param === undefined ? {} : { param }) })

const providerNotConfigured = (provider: VoiceProvider) =>
  new ApiError({
    status: 400,
    type: "invalid_request_error",
    code: "provider_not_configured",
    message: `No managed or BYOK key is configured for provider ${provider}`,
    details: { provider }
  })

const byokRequired = (format: SpeechFormat) =>
  new ApiError({
    status: 402,
    type: "invalid_request_error",
    code: "byok_required",
    message: `model auto needs a BYOK key for a priced voice model that produces ${format}; none is configured`,
    param: "model"
  })

const providerError = (error: UpstreamError) =>
  new ApiError({
    status: error.kind === "rejected" ? 400 : 502,
    type: "api_error",
    code: "provider_error",
    message: `${error.provider}: ${error.message}`,
    details: { provider: error.provider, upstream_status: error.status }
  })

/** Logs an upstream failure by provider and status (never keys, bodies or the provider's full answer). */
const logUpstreamFailure = (caller: Caller, model: string, error: UpstreamError) =>
  Effect.logWarning("voice upstream call failed").pipe(
    Effect.annotateLogs({
      request_id: caller.requestId,
      provider: error.provider,
      model,
      upstream_status: error.status ?? "none",
      kind: error.kind
    })
  )

const rateLimited = (limit: number, retryAfter: number) =>
  new ApiError({
    status: 429,
    type: "rate_limit_error",
    code: "rate_limit_exceeded",
    message: `More than ${limit} voice requests per minute for this project`,
    headers: { "retry-after": String(retryAfter) }
  })

const unitPrices = (price: UnitPrice): UnitPrices | null =>
  price.usd === null ? null : price.unit === "minute" ? { per_minute: price.usd } : { per_1k_chars: price.usd }

const NOT_BILLED: Cost = { providerCostUsd: 0, serviceChargeUsd: 0, markupPercentage: 0 }

const LANGUAGE = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})?$/

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value)

/** Field readers for the JSON request: absent or null is `undefined`, a wrong type is a 400 naming the field. */
const optionalString = (body: Record<string, unknown>, key: string) => {
  const value = body[key]
  if (value === undefined || value === null) return Effect.succeed(undefined)
  return typeof value === "string" ? Effect.succeed(value) : Effect.fail(badRequest(`${key} must be a string`, key))
}

const optionalNumber = (body: Record<string, unknown>, key: string) => {
  const value = body[key]
  if (value === undefined || value === null) return Effect.succeed(undefined)
  return typeof value === "number" && Number.isFinite(value)
    ? Effect.succeed(value)
    : Effect.fail(badRequest(`${key} must be a number`, key))
}

const optionalBoolean = (body: Record<string, unknown>, key: string) => {
  const value = body[key]
  if (value === undefined || value === null) return Effect.succeed(undefined)
  return typeof value === "boolean" ? Effect.succeed(value) : Effect.fail(badRequest(`${key} must be a boolean`, key))
}

const checkLanguage = (language: string | undefined, languages: ReadonlyArray<string> | null, model: string) => {
  if (language === undefined) return Effect.void
  if (languages !== null) {
    return languages.includes(language)
      ? Effect.void
      : Effect.fail(badRequest(`language ${language} is not supported by ${model}; use one of ${languages.join(", ")}`, "language"))
  }
  return LANGUAGE.test(language) ? Effect.void : Effect.fail(badRequest("language must be an ISO language code", "language"))
}

/** The regional provider speaks one language per voice: the voice follows the requested language. */
const regionalVoiceAndLanguage = (voice: string | null, language: string | undefined) => {
  if (voice === null) return { voice, language }
  const spoken = REGIONAL_VOICE_LANGUAGES[voice]
  if (language === undefined || spoken === language) return { voice, language: language ?? spoken }
  const first = Object.entries(REGIONAL_VOICE_LANGUAGES).find(([, lang]) => lang === language)?.[0]
  return { voice: first ?? voice, language }
}

export class Voice extends Effect.Service<Voice>()("Voice", {
  effect: Effect.gen(function*() {
    const config = yield* AppConfig
    const billing = yield* Billing
    const keys = yield* VoiceKeys
    const repo = yield* makeVoiceRepo
    const timeout = Duration.millis(config.voice.providerTimeoutMs)
    const espeakPath = config.voice.espeakPath
    const localSpeech = espeakPath === null ? false : yield* espeakAvailable(espeakPath)
    const speechModels = availableSpeechModels(localSpeech)
    const localModel = speechModels.find((model) => model.provider === "local")

    const withTimeout = <A>(provider: VoiceProvider, effect: Effect.Effect<A, UpstreamError>) =>
      effect.pipe(
        Effect.timeoutFail({
          duration: timeout,
          onTimeout: () =>
            new UpstreamError({
              provider,
              kind: "failed",
              status: null,
              message: `no answer within ${config.voice.providerTimeoutMs / 1000} seconds`
            })
        })
      )

    const upstreamSettings = (provider: Exclude<VoiceProvider, "local">) =>
      config.upstreams[provider satisfies UpstreamProviderId]

    /** The project's own key for `provider` (BYOK), else the managed key, else 400 `provider_not_configured`. */
    const resolveKey = (projectId: string, provider: VoiceProvider) =>
      Effect.gen(function*() {
        if (provider === "local") {
          const upstream: Upstream = { provider, apiKey: Redacted.make(""), baseUrl: espeakPath ?? "espeak-ng" }
          return { upstream, keySource: "local" as KeySource }
        }
        const settings = upstreamSettings(provider)
        const byok = yield* keys.byokKey(projectId, provider)
        if (Option.isSome(byok)) {
          const upstream: Upstream = {
            provider,
            apiKey: byok.value.apiKey,
            baseUrl: (byok.value.baseUrl ?? settings.baseUrl).replace(/\/+$/, "")
          }
          return { upstream, keySource: "byok" as KeySource }
        }
        if (Option.isSome(settings.apiKey)) {
          const upstream: Upstream = { provider, apiKey: settings.apiKey.value, baseUrl: settings.baseUrl }
          return { upstream, keySource: "managed" as KeySource }
        }
        return yield* providerNotConfigured(provider)
      })

    /** `auto`: the first model in latency order with a BYOK key, a known unit price and the requested format. */
    const autoRoute = (projectId: string, format: SpeechFormat) =>
      Effect.gen(function*() {
        const checked = new Map<VoiceProvider, Option.Option<Upstream>>()
        for (const model of autoCandidates) {
          if (model.price.usd === null || !model.formats.includes(format)) continue
          if (model.provider === "local") continue
          if (!checked.has(model.provider)) {
            const byok = yield* keys.byokKey(projectId, model.provider)
            const base = upstreamSettings(model.provider).baseUrl
            checked.set(
              model.provider,
              Option.map(byok, (key) => ({
                provider: model.provider,
                apiKey: key.apiKey,
                baseUrl: (key.baseUrl ?? base).replace(/\/+$/, "")
              }))
            )
          }
          const upstream = checked.get(model.provider) ?? Option.none()
          if (Option.isSome(upstream)) return { model, upstream: upstream.value, keySource: "byok" as KeySource }
        }
        return yield* byokRequired(format)
      })

    const settleAndRecord = (options: {
      readonly caller: Caller
      readonly hold: Hold
      readonly kind: "speech" | "transcription"
      readonly model: string
      readonly provider: VoiceProvider
      readonly keySource: KeySource
      readonly cost: Cost
      readonly priced: boolean
      readonly characters?: number
      readonly audioSeconds?: number
      readonly started: number
      readonly ttftMs?: number | null
      readonly status: "succeeded" | "failed" | "cancelled"
    }) =>
      billing.settle(options.hold, options.cost, options.keySource).pipe(
        Effect.zipRight(
          billing.record({
            projectId: options.caller.projectId,
            tenantId: options.caller.tenantId,
            requestId: options.caller.requestId,
            kind: options.kind,
            model: options.model,
            provider: options.provider,
            keySource: options.keySource,
            ...(options.characters === undefined ? {} : { characters: options.characters }),
            ...(options.audioSeconds === undefined ? {} : { audioSeconds: options.audioSeconds }),
            cost: options.cost,
            pricingStatus: options.priced ? "priced" : "unpriced",
            latencyMs: Date.now() - options.started,
            ttftMs: options.ttftMs ?? null,
            status: options.status
          })
        )
      )

    const parseSpeech = (body: unknown) =>
      Effect.gen(function*() {
        if (!isRecord(body)) return yield* badRequest("Request body must be a JSON object")
        const input = body.input
        if (typeof input !== "string" || input.length === 0) {
          return yield* badRequest("input is required and must be a non-empty string", "input")
        }
        const characters = [...input].length
        if (characters > MAX_INPUT_CHARS) {
          return yield* badRequest(`input has ${characters} characters; at most ${MAX_INPUT_CHARS} are allowed`, "input")
        }
        const requestedModel = yield* optionalString(body, "model")
        const model = requestedModel ?? DEFAULT_SPEECH_MODEL
        const voice = yield* optionalString(body, "voice")
        const requestedFormat = yield* optionalString(body, "response_format")
        const format = requestedFormat ?? "mp3"
        if (!(SPEECH_FORMATS as ReadonlyArray<string>).includes(format)) {
          return yield* badRequest(`response_format must be one of ${SPEECH_FORMATS.join(", ")}`, "response_format")
        }
        const speed = yield* optionalNumber(body, "speed")
        if (speed !== undefined && (speed < SPEED_RANGE.min || speed > SPEED_RANGE.max)) {
          return yield* badRequest(`speed must be between ${SPEED_RANGE.min} and ${SPEED_RANGE.max}`, "speed")
        }
        const language = yield* optionalString(body, "language")
        const stream = (yield* optionalBoolean(body, "stream")) ?? false
        return {
          input,
          characters,
          model,
          modelGiven: requestedModel !== undefined,
          voice,
          format: format as SpeechFormat,
          formatGiven: requestedFormat !== undefined,
          speed,
          language,
          stream
        }
      })

    type Routed = { readonly model: SpeechModel; readonly upstream: Upstream; readonly keySource: KeySource; readonly format: SpeechFormat }

    const routeSpeech = (
      projectId: string,
      request: { readonly model: string; readonly modelGiven: boolean; readonly format: SpeechFormat; readonly formatGiven: boolean }
    ): Effect.Effect<Routed, ApiError> =>
      Effect.gen(function*() {
        if ((AUTO_MODEL_IDS as ReadonlyArray<string>).includes(request.model)) {
          return { ...(yield* autoRoute(projectId, request.format)), format: request.format }
        }
        const model = speechModels.find((m) => m.id === request.model)
        if (model === undefined) return yield* badRequest(`Unsupported model ${request.model}`, "model")
        if (!model.formats.includes(request.format)) {
          return yield* badRequest(
            `Model ${model.id} cannot produce ${request.format}; it supports ${model.formats.join(", ")}`,
            "response_format"
          )
        }
        const key = resolveKey(projectId, model.provider).pipe(
          Effect.map(({ upstream, keySource }) => ({ model, upstream, keySource, format: request.format }))
        )
        // Without a model and without a key for the default provider, the local model speaks (WAV by default).
        const local = localModel
        if (request.modelGiven || local === undefined) return yield* key
        const localFormat = request.formatGiven ? request.format : "wav"
        if (!local.formats.includes(localFormat)) return yield* key
        return yield* key.pipe(
          Effect.catchIf(
            (error) => error.code === "provider_not_configured",
            () => routeSpeech(projectId, { model: local.id, modelGiven: true, format: localFormat, formatGiven: true })
          )
        )
      })

    const speech = (caller: Caller, body: unknown) =>
      Effect.gen(function*() {
        const request = yield* parseSpeech(body)
        const { model, upstream, keySource, format } = yield* routeSpeech(caller.projectId, request)
        yield* checkLanguage(request.language, model.languages, model.id)
        const resolved = model.family === "regional"
          ? regionalVoiceAndLanguage(resolveVoice(model, request.voice), request.language)
          : { voice: resolveVoice(model, request.voice), language: request.language }
        const adapter = speechAdapters[model.provider]
        if (adapter === undefined) return yield* badRequest(`Unsupported model ${model.id}`, "model")

        const cost = costOf({
          prices: unitPrices(model.price),
          use: { characters: request.characters },
          keySource,
          markupPercentage: 0
        })
        const hold = yield* billing.authorize(caller.projectId, {
          model: model.id,
          estimateUsd: cost.providerCostUsd,
          keySource
        })
        const started = Date.now()
        const finish = (status: "succeeded" | "failed" | "cancelled", billed: Cost, ttftMs?: number | null) =>
          settleAndRecord({
            caller,
            hold,
            kind: "speech",
            model: model.id,
            provider: model.provider,
            keySource,
            cost: billed,
            priced: model.price.usd !== null,
            characters: request.characters,
            started,
            ttftMs: ttftMs ?? null,
            status
          })

        const response = yield* withTimeout(
          model.provider,
          adapter(upstream, {
            model,
            input: request.input,
            voice: resolved.voice,
            format: format,
            speed: model.supportsSpeed ? request.speed : undefined,
            language: resolved.language,
            stream: request.stream
          })
        ).pipe(
          Effect.tapError((error) => Effect.zipRight(logUpstreamFailure(caller, model.id, error), finish("failed", NOT_BILLED))),
          Effect.mapError(providerError)
        )
        yield* Effect.annotateCurrentSpan({ "voice.provider": model.provider, "voice.model": model.id })
        const contentType = SPEECH_CONTENT_TYPES[format]
        const audio = bodyStream(model.provider, response)

        if (request.stream) {
          let firstChunkAt: number | null = null
          const stream = audio.pipe(
            Stream.tap(() => Effect.sync(() => (firstChunkAt ??= Date.now()))),
            // The provider accepted the text, so it charges for it however the stream ends.
            Stream.ensuringWith((exit) =>
              finish(
                Exit.isSuccess(exit) ? "succeeded" : Exit.isInterrupted(exit) ? "cancelled" : "failed",
                cost,
                firstChunkAt === null ? null : firstChunkAt - started
              )
            )
          )
          return {
            provider: model.provider,
            model: model.id,
            contentType,
            audio: { _tag: "streaming", stream }
          } satisfies SpeechAudio
        }

        const bytes = yield* withTimeout(model.provider, Stream.runCollect(audio)).pipe(
          Effect.map((chunks) => Buffer.concat(Array.from(chunks))),
          Effect.tapError((error) => Effect.zipRight(logUpstreamFailure(caller, model.id, error), finish("failed", cost))),
          Effect.mapError(providerError)
        )
        yield* finish("succeeded", cost)
        return {
          provider: model.provider,
          model: model.id,
          contentType,
          audio: { _tag: "buffered", bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) }
        } satisfies SpeechAudio
      })

    const parseTranscription = (upload: TranscriptionUpload) =>
      Effect.gen(function*() {
        const fields = upload.fields
        const blank = (key: string) => {
          const value = fields[key]?.trim()
          return value === undefined || value.length === 0 ? undefined : value
        }
        const forced = blank("provider")
        const modelId = blank("model") ??
          (forced === undefined
            ? DEFAULT_TRANSCRIPTION_MODEL
            : TRANSCRIPTION_MODELS.find((m) => m.provider === forced)?.id ?? DEFAULT_TRANSCRIPTION_MODEL)
        const model = transcriptionModel(modelId)
        if (model === undefined) return yield* badRequest(`Unsupported model ${modelId}`, "model")
        if (forced !== undefined && forced !== model.provider) {
          return yield* badRequest(`provider ${forced} does not serve model ${model.id} (served by ${model.provider})`, "provider")
        }
        const format = blank("response_format") ?? "json"
        if (!(TRANSCRIPTION_FORMATS as ReadonlyArray<string>).includes(format)) {
          return yield* badRequest(`response_format must be one of ${TRANSCRIPTION_FORMATS.join(", ")}`, "response_format")
        }
        const rawTemperature = blank("temperature")
        const temperature = rawTemperature === undefined ? undefined : Number(rawTemperature)
        if (
          temperature !== undefined &&
          (!Number.isFinite(temperature) || temperature < TEMPERATURE_RANGE.min || temperature > TEMPERATURE_RANGE.max)
        ) {
          return yield* badRequest(`temperature must be between ${TEMPERATURE_RANGE.min} and ${TEMPERATURE_RANGE.max}`, "temperature")
        }
        const rawDiarize = blank("diarize")?.toLowerCase()
        if (rawDiarize !== undefined && !["true", "false", "1", "0"].includes(rawDiarize)) {
          return yield* badRequest("diarize must be true or false", "diarize")
        }
        const diarize = rawDiarize === "true" || rawDiarize === "1"
        if (diarize && !model.diarization) {
          return yield* badRequest(`Model ${model.id} does not support diarization`, "diarize")
        }
        const language = blank("language")
        yield* checkLanguage(language, model.languages, model.id)
        const prompt = blank("prompt")

        if (upload.file === undefined) return yield* badRequest("file is required", "file")
        if (upload.file.bytes.byteLength > MAX_FILE_BYTES) {
          return yield* badRequest(`file is larger than 25 MB (${MAX_FILE_BYTES} bytes)`, "file")
        }
        if (upload.file.bytes.byteLength === 0) return yield* badRequest("file is empty", "file")
        const container = containerOf(upload.file.mimeType, upload.file.fileName)
        if (container === undefined) {
          return yield* badRequest(
            "Unsupported audio file; accepted: mp3, wav, webm, mp4, m4a, ogg, flac (by MIME type, then extension)",
            "file"
          )
        }
        const extension = container.extensions[0] ?? container.container
        const named = container.extensions.some((ext) => upload.file?.fileName.toLowerCase().endsWith(`.${ext}`))
        const file: AudioFile = {
          bytes: upload.file.bytes,
          fileName: named ? upload.file.fileName : `audio.${extension}`,
          mimeType: CONTAINER_MIME[container.container] ?? "application/octet-stream",
          container: container.container
        }
        return {
          model,
          format: format as TranscriptionFormat,
          file,
          language,
          diarize,
          // prompt and temperature are hints only the general-purpose provider understands.
          prompt: model.promptAndTemperature ? prompt : undefined,
          temperature: model.promptAndTemperature ? temperature : undefined
        }
      })

    const transcribe = (caller: Caller, upload: TranscriptionUpload) =>
      Effect.gen(function*() {
        const request = yield* parseTranscription(upload)
        const { model } = request
        const adapter = transcriptionAdapters[model.provider]
        if (adapter === undefined) return yield* badRequest(`Unsupported model ${model.id}`, "model")
        const { upstream, keySource } = yield* resolveKey(caller.projectId, model.provider)
        const prices = unitPrices(model.price)
        // The duration is known only afterwards: hold one minute's worth, settle on the reported duration.
        const estimate = costOf({ prices, use: { audioSeconds: 60 }, keySource, markupPercentage: 0 })
        const hold = yield* billing.authorize(caller.projectId, {
          model: model.id,
          estimateUsd: estimate.providerCostUsd,
          keySource
        })
        const started = Date.now()
        const record = (status: "succeeded" | "failed", cost: Cost, audioSeconds: number | undefined) =>
          settleAndRecord({
            caller,
            hold,
            kind: "transcription",
            model: model.id,
            provider: model.provider,
            keySource,
            cost,
            priced: model.price.usd !== null,
            ...(audioSeconds === undefined ? {} : { audioSeconds }),
            started,
            status
          })
        const transcript = yield* withTimeout(
          model.provider,
          adapter(upstream, {
            model,
            file: request.file,
            language: request.language,
            prompt: request.prompt,
            temperature: request.temperature,
            diarize: request.diarize
          }, { pollIntervalMs: config.voice.pollIntervalMs })
        ).pipe(
          Effect.tapError((error) =>
            Effect.zipRight(logUpstreamFailure(caller, model.id, error), record("failed", NOT_BILLED, undefined))
          ),
          Effect.mapError(providerError)
        )
        const seconds = transcript.durationSeconds
        const cost = seconds === null
          ? (prices === null ? { ...NOT_BILLED, providerCostUsd: null } : NOT_BILLED)
          : costOf({ prices, use: { audioSeconds: seconds }, keySource, markupPercentage: 0 })
        yield* record("succeeded", cost, seconds ?? undefined)
        return {
          provider: model.provider,
          model: model.id,
          contentType: TRANSCRIPTION_CONTENT_TYPES[request.format],
          body: render(transcript, request.format, model.provider, model.id)
        } satisfies TranscriptionResult
      })

    return {
      /** Counts the request against the project's per-minute window; 429 over the limit. */
      limit: (projectId: string) =>
        repo.countRequest(projectId).pipe(
          Effect.orDie,
          Effect.flatMap(({ requests, secondsLeft }) =>
            requests > config.voice.rateLimitPerMinute
              ? Effect.fail(rateLimited(config.voice.rateLimitPerMinute, secondsLeft))
              : Effect.void
          )
        ),
      speech,
      transcribe,
      /** The speech models this server offers (the published registry). */
      speechModels
    }
  })
}) {}

