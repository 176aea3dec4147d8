/**
 * Every input form of `POST /api/ai/vision` (contract §4.7) turned into one `VisionInput`: JSON with
 * `image_url` / `image_base64` + `mime_type` / `image` / `images`, or `multipart/form-data` with `file` fields
 * or `files[]`. Multipart parts are read in memory (the body limit bounds them), so no temporary files.
 */
import { HttpServerRequest, Multipart } from "@effect/platform"
import { Chunk, Effect, ParseResult, Schema, Stream } from "effect"
import { parseDataUrl } from "../../layers/providers/content.ts"
import { ApiError } from "../../schemas/errors.ts"
import { type ImageInput, VisionJsonRequest } from "../../schemas/vision.ts"

/** Where an image comes from, before it is loaded and checked. */
export type ImageSource =
  | { readonly kind: "url"; readonly url: string }
  | { readonly kind: "base64"; readonly base64: string; readonly declaredMime: string | undefined }
  | { readonly kind: "bytes"; readonly bytes: Uint8Array; readonly declaredMime: string | undefined }

export interface ImageRef {
  /** Position in the request's images, from 0 (the order documented in schemas/vision.ts). */
  readonly index: number
  /** The request field that carried it, e.g. `image_url`, `images[2]`, `file`, `messages[1].content[0]`. */
  readonly param: string
  /** Multipart file name. */
  readonly fileName?: string | undefined
  readonly source: ImageSource
}

export interface VisionInput {
  readonly images: ReadonlyArray<ImageRef>
  readonly prompt?: string | undefined
  readonly model?: string | undefined
  readonly stream: boolean
  readonly responseFormat: "json" | "text"
  readonly maxTokens?: number | undefined
  readonly detail?: "auto" | "low" | "high" | undefined
  readonly categories?: ReadonlyArray<string> | undefined
}

/** Turns a schema failure into a 400 naming the field. */
export const invalidInput = (error: ParseResult.ParseError): ApiError => {
  const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
  const param = issue && issue.path.length > 0 ? issue.path.map(String).join(".") : undefined
  const message = issue ? (param ? `${param}: ${issue.message}` : issue.message) : error.message
  return ApiError.badRequest(message, param === undefined ? {} : { param })
}

/** A URL field: `data:` URLs are inline images, anything else is fetched. */
export const sourceOfUrl = (url: string, declaredMime?: string): ImageSource => {
  const inline = parseDataUrl(url.trim())
  return inline === undefined
    ? { kind: "url", url: url.trim() }
    : { kind: "base64", base64: inline.data, declaredMime: declaredMime ?? inline.mediaType }
}

/** A base64 field; a `data:` prefix is tolerated and its type is a label like `mime_type`. */
const sourceOfBase64 = (base64: string, declaredMime: string | undefined): ImageSource =>
  base64.trimStart().startsWith("data:") ? sourceOfUrl(base64, declaredMime) : { kind: "base64", base64, declaredMime }

const sourceOfImage = (image: ImageInput): ImageSource =>
  "url" in image ? sourceOfUrl(image.url) : sourceOfBase64(image.base64, image.mimeType ?? image.mime_type)

const noImage = ApiError.badRequest(
  "No image: send image_url, image_base64 (with mime_type), image, images, or multipart file/files[] parts",
  { param: "image_url" }
)

export const fromJson = (body: VisionJsonRequest): Effect.Effect<VisionInput, ApiError> => {
  const sources: Array<{ param: string; source: ImageSource }> = []
  if (body.image_url !== undefined) sources.push({ param: "image_url", source: sourceOfUrl(body.image_url) })
  if (body.image_base64 !== undefined) {
    sources.push({ param: "image_base64", source: sourceOfBase64(body.image_base64, body.mime_type) })
  }
  if (body.image !== undefined) sources.push({ param: "image", source: sourceOfImage(body.image) })
  body.images?.forEach((image, i) => sources.push({ param: `images[${i}]`, source: sourceOfImage(image) }))
  if (sources.length === 0) return Effect.fail(noImage)
  return Effect.succeed({
    images: sources.map((s, index) => ({ index, ...s })),
    prompt: body.prompt,
    model: body.model,
    stream: body.stream ?? false,
    responseFormat: body.response_format ?? "text",
    maxTokens: body.max_tokens,
    detail: body.detail,
    categories: body.categories
  })
}

const BooleanText = Schema.transform(Schema.Literal("true", "false", "1", "0", ""), Schema.Boolean, {
  strict: true,
  decode: (text) => text === "true" || text === "1",
  encode: (flag) => (flag ? "true" : "false")
})

/** The text fields of the multipart form. */
const MultipartFields = Schema.Struct({
  prompt: Schema.optional(Schema.String.pipe(Schema.maxLength(32_000))),
  model: Schema.optional(Schema.String),
  stream: Schema.optional(BooleanText),
  response_format: Schema.optional(Schema.Literal("json", "text")),
  max_tokens: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 32_768))),
  detail: Schema.optional(Schema.Literal("auto", "low", "high")),
  categories: Schema.optional(Schema.String),
  image_url: Schema.optional(Schema.String)
})

const FILE_FIELDS: ReadonlySet<string> = new Set(["file", "files", "files[]"])
const TEXT_FIELDS: ReadonlySet<string> = new Set(Object.keys(MultipartFields.fields))

/** An `application/octet-stream` or empty part type says nothing about the image. */
const partLabel = (contentType: string): string | undefined => {
  const type = contentType.split(";")[0]!.trim().toLowerCase()
  return type === "" || type === "application/octet-stream" ? undefined : type
}

export const fromMultipart = (
  parts: Stream.Stream<Multipart.Part, Multipart.MultipartError>
): Effect.Effect<VisionInput, ApiError | Multipart.MultipartError> =>
  Effect.gen(function*() {
    const fields: Record<string, string> = {}
    const files: Array<ImageRef> = []
    yield* Stream.runForEach(parts, (part) =>
      Effect.gen(function*() {
        if (part._tag === "Field") {
          // Unknown text fields are ignored, as unknown JSON fields are.
          if (TEXT_FIELDS.has(part.key)) fields[part.key] = part.value
          return
        }
        if (!FILE_FIELDS.has(part.key)) {
          return yield* ApiError.badRequest(`Files go in file or files[] fields, not ${part.key}`, { param: part.key })
        }
        const chunks = yield* Stream.runCollect(part.content)
        const bytes = new Uint8Array(Buffer.concat(Chunk.toReadonlyArray(chunks)))
        files.push({
          index: files.length,
          param: part.key,
          fileName: part.name,
          source: { kind: "bytes", bytes, declaredMime: partLabel(part.contentType) }
        })
      }))
    const decoded = yield* Schema.decodeUnknown(MultipartFields)(fields).pipe(Effect.mapError(invalidInput))
    const images: Array<ImageRef> = [...files]
    if (decoded.image_url !== undefined) {
      images.push({ index: images.length, param: "image_url", source: sourceOfUrl(decoded.image_url) })
    }
    if (images.length === 0) return yield* noImage
    const categories = decoded.categories?.split(",").map((c) => c.trim()).filter((c) => c.length > 0)
    return {
      images,
      prompt: decoded.prompt,
      model: decoded.model,
      stream: decoded.stream ?? false,
      responseFormat: decoded.response_format ?? "text",
      maxTokens: decoded.max_tokens,
      detail: decoded.detail,
      categories
    }
  })

/** Reads the request body by its content type. */
export const readVisionInput = (
  request: HttpServerRequest.HttpServerRequest
): Effect.Effect<VisionInput, ApiError> => {
  const contentType = (request.headers["content-type"] ?? "").toLowerCase()
  if (contentType.includes("multipart/form-data")) {
    return fromMultipart(request.multipartStream).pipe(
      Effect.catchTag("MultipartError", (error) =>
        Effect.fail(
          error.reason === "BodyTooLarge" || error.reason === "FileTooLarge" || error.reason === "FieldTooLarge" ||
            error.reason === "TooManyParts"
            ? new ApiError({
              status: 413,
              type: "invalid_request_error",
              code: "payload_too_large",
              message: "The multipart body is too large"
            })
            : ApiError.badRequest("The multipart body could not be parsed", { code: "invalid_multipart" })
        ))
    )
  }
  if (contentType === "" || contentType.includes("application/json") || contentType.includes("+json")) {
    return request.json.pipe(
      Effect.mapError((error) =>
        error.cause instanceof SyntaxError
          ? ApiError.badRequest(`Request body is not valid JSON: ${error.cause.message}`, { code: "invalid_json" })
          : String(error.cause).includes("maxBytes")
          ? new ApiError({ status: 413, type: "invalid_request_error", code: "payload_too_large", message: "Request body is too large" })
          : ApiError.badRequest("Request body could not be read", { code: "invalid_json" })
      ),
      Effect.flatMap((body) =>
        Schema.decodeUnknown(VisionJsonRequest, { onExcessProperty: "ignore" })(body).pipe(Effect.mapError(invalidInput))
      ),
      Effect.flatMap(fromJson)
    )
  }
  return Effect.fail(
    new ApiError({
      status: 415,
      type: "invalid_request_error",
      code: "unsupported_media_type",
      message: "Send application/json or multipart/form-data"
    })
  )
}
