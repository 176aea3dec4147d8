/**
 * Voice handlers: count the request against the rate limit, read the body (JSON, or a multipart upload whose file
 * is measured while it streams in), call the voice service, and answer raw audio or the transcript with
 * `X-Provider` and `X-Request-Id`.
 */
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse, Multipart } from "@effect/platform"
import { Effect, Option, Stream } from "effect"
import { AppConfig } from "../../layers/config.ts"
import { GatewayApi } from "../../layers/http/api.ts"
import { currentRequestId } from "../../layers/http/middleware.ts"
import { CurrentProject } from "../auth/Principal.ts"
import { MAX_FILE_BYTES, speechDocument, transcriptionDocument, voicesDocument } from "./registry.ts"
import { badRequest } from "./errors.ts"
import type { TranscriptionUpload } from "./requests.ts"
import { Voice } from "./Service.ts"

const tooLarge = () => badRequest(`file is larger than 25 MB (${MAX_FILE_BYTES} bytes)`, "file")

const multipartFailure = (error: Multipart.MultipartError) => {
  switch (error.reason) {
    case "FileTooLarge":
      return tooLarge()
    case "FieldTooLarge":
      return badRequest("A multipart field is too large")
    case "TooManyParts":
      return badRequest("Too many multipart parts")
    default:
      return badRequest("The multipart body could not be parsed")
  }
}

/**
 * Reads the multipart upload part by part. The audio file is counted chunk by chunk and the request fails as soon
 * as it passes 25 MB, before the rest of the upload is read; other file parts are drained under the same cap.
 */
const readUpload = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function*() {
    const contentType = request.headers["content-type"] ?? ""
    if (!/^multipart\/form-data/i.test(contentType)) {
      return yield* badRequest("The request must be multipart/form-data with an audio file in the field file", "file")
    }
    const fields: Record<string, string> = {}
    let file: TranscriptionUpload["file"] = undefined
    yield* request.multipartStream.pipe(
      Multipart.withLimitsStream({
        maxParts: Option.some(32),
        maxFieldSize: 64 * 1024,
        // A backstop for every part (it counts part headers too); the exact file limit is counted below.
        maxFileSize: Option.some(MAX_FILE_BYTES + 64 * 1024)
      }),
      Stream.runForEach((part) => {
        if (part._tag === "Field") {
          fields[part.key] = part.value
          return Effect.void
        }
        const keep = part.key === "file" && file === undefined
        const chunks: Array<Uint8Array> = []
        let size = 0
        return part.content.pipe(
          Stream.runForEach((chunk) => {
            size += chunk.byteLength
            if (size > MAX_FILE_BYTES) return Effect.fail(tooLarge())
            if (keep) chunks.push(chunk)
            return Effect.void
          }),
          Effect.map(() => {
            if (!keep) return
            const bytes = new Uint8Array(size)
            let offset = 0
            for (const chunk of chunks) {
              bytes.set(chunk, offset)
              offset += chunk.byteLength
            }
            file = { fileName: part.name, mimeType: part.contentType, bytes }
          })
        )
      }),
      Effect.catchTag("MultipartError", (error) => Effect.fail(multipartFailure(error)))
    )
    return { fields, file } satisfies TranscriptionUpload
  })

export const VoiceHttpLive = HttpApiBuilder.group(GatewayApi, "voice", (handlers) =>
  Effect.gen(function*() {
    const voice = yield* Voice
    const config = yield* AppConfig
    const caller = Effect.all({ project: CurrentProject, requestId: currentRequestId }).pipe(
      Effect.map(({ project, requestId }) => ({ projectId: project.projectId, tenantId: project.tenantId, requestId }))
    )
    return handlers
      .handleRaw("createSpeech", ({ request }) =>
        Effect.gen(function*() {
          const who = yield* caller
          yield* voice.limit(who.projectId)
          const body = yield* request.json.pipe(
            Effect.catchIf(
              (error) => error.cause instanceof SyntaxError,
              () => Effect.fail(badRequest("The request body is not valid JSON"))
            ),
            // Anything else (the body limit) is rendered by the API guard.
            Effect.orDie
          )
          const speech = yield* voice.speech(who, body)
          const headers = { "x-provider": speech.provider, "x-request-id": who.requestId }
          return speech.audio._tag === "streaming"
            ? HttpServerResponse.stream(speech.audio.stream, {
              contentType: speech.contentType,
              headers: { ...headers, "x-stream": "true", "cache-control": "no-store" }
            })
            : HttpServerResponse.uint8Array(speech.audio.bytes, { contentType: speech.contentType, headers })
        }))
      .handleRaw("createTranscription", ({ request }) =>
        Effect.gen(function*() {
          const who = yield* caller
          yield* voice.limit(who.projectId)
          const upload = yield* readUpload(request)
          const result = yield* voice.transcribe(who, upload)
          const headers = { "x-provider": result.provider, "x-request-id": who.requestId }
          return result.body.kind === "json"
            ? HttpServerResponse.unsafeJson(result.body.body, { headers })
            : HttpServerResponse.text(result.body.body, { contentType: result.contentType, headers })
        }))
      .handle("speechCapabilities", () =>
        Effect.succeed(speechDocument(voice.speechModels, config.voice.rateLimitPerMinute)))
      .handle("transcriptionCapabilities", () =>
        Effect.succeed(transcriptionDocument(config.voice.rateLimitPerMinute, config.voice.providerTimeoutMs)))
      .handle("listVoices", () => Effect.succeed(voicesDocument(voice.speechModels)))
  }))
