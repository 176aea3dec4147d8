/**
 * Loads every image of a request (URL → SSRF-safe fetch with the provider's size cap; base64 → decoded) and
 * checks it against the universal safe formats and the provider's limits BEFORE any provider call. The first
 * offending image, in request order, is named in a 400 `unsupported_format` or `image_too_large` (contract §7.4)
 * with `image_index`, `param` and, for uploads, `file_name`.
 */
import { Effect, Either } from "effect"
import type { ProviderFamily } from "../../layers/providers/types.ts"
import { safeFetch, type SafeFetchError } from "../../layers/safe-fetch.ts"
import { ApiError } from "../../schemas/errors.ts"
import type { ImageRef } from "./input.ts"
import { type ImageInfo, inspectImage } from "./inspect.ts"
import { IMAGE_LIMITS, type ImageLimits, maxDimensionFor } from "./limits.ts"

export interface PreparedImage extends ImageInfo {
  readonly index: number
  readonly param: string
  readonly fileName?: string | undefined
  readonly bytes: Uint8Array
  /** `data:<mime>;base64,…` of the checked bytes: what goes to the provider. */
  readonly dataUrl: string
}

export interface LoadOptions {
  readonly family: ProviderFamily
  /** Provider id for messages (`openai`, `custom:…`). */
  readonly provider: string
  readonly fetchTimeoutMs: number
  readonly allowLoopback: boolean
}

type ImageErrorCode = "unsupported_format" | "image_too_large" | "invalid_image" | SafeFetchError["code"]

const label = (ref: ImageRef) => `Image ${ref.index}${ref.fileName !== undefined ? ` (${ref.fileName})` : ""}`

const imageError = (
  code: ImageErrorCode,
  ref: ImageRef,
  options: LoadOptions,
  message: string,
  details: Record<string, unknown> = {}
) =>
  ApiError.badRequest(`${label(ref)}: ${message}`, {
    code,
    param: ref.param,
    details: {
      image_index: ref.index,
      ...(ref.fileName !== undefined ? { file_name: ref.fileName } : {}),
      provider: options.provider,
      ...details
    }
  })

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/
const BASE64_URL = /^[A-Za-z0-9\-_]*={0,2}$/

/** Decoded size of base64 text without decoding it. */
const decodedLength = (text: string) => Math.floor((text.length * 3) / 4) - (text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0)

/** The same type under its usual aliases. */
const normaliseMime = (mime: string) => {
  const type = mime.split(";")[0]!.trim().toLowerCase()
  switch (type) {
    case "image/jpg":
    case "image/pjpeg":
      return "image/jpeg"
    case "image/x-png":
    case "image/apng":
      return "image/png"
    default:
      return type
  }
}

const tooLarge = (ref: ImageRef, options: LoadOptions, limits: ImageLimits, bytes: number | null) =>
  imageError(
    "image_too_large",
    ref,
    options,
    `${bytes === null ? "the image" : `${bytes} bytes`} is over the ${options.provider} limit of ${limits.maxImageBytes} bytes per image`,
    { reason: "bytes", ...(bytes === null ? {} : { bytes }), max_bytes: limits.maxImageBytes }
  )

/** The raw bytes of one image, or the error that names it. */
const loadBytes = (ref: ImageRef, options: LoadOptions, limits: ImageLimits): Effect.Effect<Uint8Array, ApiError> => {
  const source = ref.source
  switch (source.kind) {
    case "bytes":
      return Effect.succeed(source.bytes)
    case "base64": {
      const text = source.base64.replace(/\s+/g, "")
      if (!BASE64.test(text) && !BASE64_URL.test(text)) {
        return Effect.fail(imageError("invalid_image", ref, options, "the base64 data is not valid base64", { reason: "base64" }))
      }
      const size = decodedLength(text)
      if (size > limits.maxImageBytes) return Effect.fail(tooLarge(ref, options, limits, size))
      return Effect.succeed(new Uint8Array(Buffer.from(text, BASE64.test(text) ? "base64" : "base64url")))
    }
    case "url":
      return safeFetch(source.url, {
        maxBytes: limits.maxImageBytes,
        timeoutMs: options.fetchTimeoutMs,
        allowLoopback: options.allowLoopback,
        headers: { accept: "image/jpeg, image/png, image/webp, image/gif;q=0.9, */*;q=0.1" }
      }).pipe(
        Effect.map((fetched) => fetched.bytes),
        Effect.mapError((error) =>
          error.code === "response_too_large"
            ? tooLarge(ref, options, limits, null)
            : imageError(error.code, ref, options, `the image URL could not be fetched: ${error.message}`, {
              reason: "fetch",
              ...(error.status !== undefined ? { upstream_status: error.status } : {})
            })
        )
      )
  }
}

/** Checks one loaded image; `count` is the number of images in the request (some limits depend on it). */
const check = (
  ref: ImageRef,
  bytes: Uint8Array,
  count: number,
  options: LoadOptions,
  limits: ImageLimits
): Effect.Effect<PreparedImage, ApiError> =>
  Effect.gen(function*() {
    if (bytes.length > limits.maxImageBytes) return yield* tooLarge(ref, options, limits, bytes.length)
    const inspection = yield* inspectImage(bytes)
    if (!inspection.ok) {
      return yield* imageError("unsupported_format", ref, options, `${inspection.message}; send JPEG, PNG, WEBP or GIF`, {
        reason: inspection.reason,
        ...(inspection.detected !== undefined ? { detected_format: inspection.detected } : {})
      })
    }
    const info = inspection.info
    const declared = ref.source.kind === "url" ? undefined : ref.source.declaredMime
    if (declared !== undefined && declared.trim() !== "" && normaliseMime(declared) !== info.mime) {
      return yield* imageError(
        "unsupported_format",
        ref,
        options,
        `it is labelled ${normaliseMime(declared)} but its bytes are ${info.mime}`,
        { reason: "label_mismatch", declared_format: normaliseMime(declared), detected_format: info.mime }
      )
    }
    if (!limits.formats.includes(info.format)) {
      return yield* imageError("unsupported_format", ref, options, `${options.provider} does not accept ${info.mime}`, {
        reason: "provider_format",
        detected_format: info.mime,
        accepted_formats: limits.formats.map((f) => `image/${f}`)
      })
    }
    if (info.format === "gif" && info.animated && !limits.animatedGif) {
      return yield* imageError("unsupported_format", ref, options, `${options.provider} does not accept animated GIFs`, {
        reason: "animated_gif",
        detected_format: info.mime
      })
    }
    const maxDimension = maxDimensionFor(limits, count)
    if (maxDimension !== undefined && (info.width > maxDimension || info.height > maxDimension)) {
      return yield* imageError(
        "image_too_large",
        ref,
        options,
        `${info.width}×${info.height} px is over the ${options.provider} limit of ${maxDimension}×${maxDimension} px${
          maxDimension === limits.maxDimension ? "" : ` for requests of more than ${limits.manyImages?.over} images`
        }`,
        { reason: "dimensions", width: info.width, height: info.height, max_dimension: maxDimension }
      )
    }
    return {
      ...info,
      index: ref.index,
      param: ref.param,
      fileName: ref.fileName,
      bytes,
      dataUrl: `data:${info.mime};base64,${Buffer.from(bytes).toString("base64")}`
    }
  })

/** Loads (URLs four at a time) and checks every image; fails on the first offending one in request order. */
export const loadImages = (
  refs: ReadonlyArray<ImageRef>,
  options: LoadOptions
): Effect.Effect<ReadonlyArray<PreparedImage>, ApiError> =>
  Effect.gen(function*() {
    const limits = IMAGE_LIMITS[options.family]
    if (refs.length > limits.maxImages) {
      const first = refs[limits.maxImages]!
      return yield* imageError(
        "image_too_large",
        first,
        options,
        `the request has ${refs.length} images; ${options.provider} takes at most ${limits.maxImages} per request`,
        { reason: "too_many_images", images: refs.length, max_images: limits.maxImages }
      )
    }
    const loaded = yield* Effect.forEach(
      refs,
      (ref) => loadBytes(ref, options, limits).pipe(Effect.flatMap((bytes) => check(ref, bytes, refs.length, options, limits)), Effect.either),
      { concurrency: 4 }
    )
    const prepared: Array<PreparedImage> = []
    let total = 0
    for (const [i, result] of loaded.entries()) {
      if (Either.isLeft(result)) return yield* result.left
      total += result.right.bytes.length
      if (total > limits.maxTotalBytes) {
        return yield* imageError(
          "image_too_large",
          refs[i]!,
          options,
          `the images add up to more than the ${options.provider} limit of ${limits.maxTotalBytes} bytes per request`,
          { reason: "request_total", total_bytes: total, max_total_bytes: limits.maxTotalBytes }
        )
      }
      prepared.push(result.right)
    }
    return prepared
  })
