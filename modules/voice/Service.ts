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
import type { ApiError } from "../../schemas/errors.ts"
import { costOf, type Cost, type KeySource, type UnitPrices } from "../usage/cost.ts"
import { Billing, type Hold } from "../usage/Service.ts"
import { badRequest, byokRequired, providerError, providerNotConfigured, rateLimited } from "./errors.ts"
import { VoiceKeys } from "./Keys.ts"
import { speechAdapters, transcriptionAdapters } from "./providers/index.ts"
import { espeakAvailable } from "./providers/local.ts"
import {
  AUTO_MODEL_IDS,
  autoCandidates,
  availableSpeechModels,
  resolveVoice,
  SPEECH_CONTENT_TYPES,
  type SpeechFormat,
  type SpeechModel,
  TRANSCRIPTION_CONTENT_TYPES,
  type UnitPrice,
  type VoiceProvider
} from "./registry.ts"
import { makeVoiceRepo } from "./Repo.ts"
import { checkLanguage, parseSpeech, parseTranscription, regionalVoiceAndLanguage, type TranscriptionUpload } from "./requests.ts"
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

export interface TranscriptionResult {
  readonly provider: VoiceProvider
  readonly model: string
  readonly contentType: string
  readonly body: { readonly kind: "json"; readonly body: unknown } | { readonly kind: "text"; readonly body: string }
}

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

const unitPrices = (price: UnitPrice): UnitPrices | null =>
  price.usd === null ? null : price.unit === "minute" ? { per_minute: price.usd } : { per_1k_chars: price.usd }

const NOT_BILLED: Cost = { providerCostUsd: 0, serviceChargeUsd: 0, markupPercentage: 0 }

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
          // The client left before the provider answered: return the hold.
          Effect.onInterrupt(() => finish("cancelled", NOT_BILLED)),
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
          Effect.onInterrupt(() => finish("cancelled", cost)),
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
        const record = (status: "succeeded" | "failed" | "cancelled", cost: Cost, audioSeconds: number | undefined) =>
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
          Effect.onInterrupt(() => record("cancelled", NOT_BILLED, undefined)),
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

