/**
 * Voice request rules (contract §4.8 tables, §8 limits): the TTS JSON body and the STT multipart fields, validated
 * against the registry. Every violation is a 400 `bad_request` naming the field in `param`.
 */
import { Effect } from "effect"
import type { AudioFile } from "./providers/types.ts"
import {
  containerOf,
  CONTAINER_MIME,
  DEFAULT_SPEECH_MODEL,
  DEFAULT_TRANSCRIPTION_MODEL,
  MAX_FILE_BYTES,
  MAX_INPUT_CHARS,
  REGIONAL_VOICE_LANGUAGES,
  SPEECH_FORMATS,
  SPEED_RANGE,
  type SpeechFormat,
  TEMPERATURE_RANGE,
  TRANSCRIPTION_FORMATS,
  TRANSCRIPTION_MODELS,
  transcriptionModel,
  type TranscriptionFormat
} from "./registry.ts"
import { badRequest } from "./errors.ts"

export interface TranscriptionUpload {
  readonly fields: Readonly<Record<string, string>>
  readonly file: { readonly fileName: string; readonly mimeType: string; readonly bytes: Uint8Array<ArrayBuffer> } | undefined
}

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

export const checkLanguage = (language: string | undefined, languages: ReadonlyArray<string> | null, model: string) => {
  if (language === undefined) return Effect.void
  if (languages !== null) {
    return languages.includes(language)
      ? Effect.void
      : Effect.fail(badRequest(`language ${language} is not supported by ${model}; use one of ${languages.join(", ")}`, "language"))
  }
  return LANGUAGE.test(language) ? Effect.void : Effect.fail(badRequest("language must be an ISO language code", "language"))
}

/** The regional provider speaks one language per voice: the voice follows the requested language. */
export const regionalVoiceAndLanguage = (voice: string | null, language: string | undefined) => {
  if (voice === null) return { voice, language }
  const spoken = REGIONAL_VOICE_LANGUAGES[voice]
  if (language === undefined || spoken === language) return { voice, language: language ?? spoken }
  const first = Object.entries(REGIONAL_VOICE_LANGUAGES).find(([, lang]) => lang === language)?.[0]
  return { voice: first ?? voice, language }
}

/** The TTS JSON body, checked field by field; the model and format are checked against the registry later. */
export const parseSpeech = (body: unknown) =>
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

/** The STT upload's fields and file, checked against the registry. */
export const parseTranscription = (upload: TranscriptionUpload) =>
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
