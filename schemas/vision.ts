/**
 * Vision (contract §4.7): request bodies (JSON and multipart) and answers of `POST /api/ai/vision` and its
 * presets. The contract leaves the parameter table out; this is it (also in docs/vision.md).
 */
import { Multipart } from "@effect/platform"
import { Schema } from "effect"

/** An image given by URL (http/https, fetched by the gateway; a `data:` URL is read inline). */
export const ImageByUrl = Schema.Struct({
  url: Schema.String.annotations({ description: "http(s) URL of the image, fetched by the gateway through its SSRF-safe fetcher; or a data: URL" })
}).annotations({ identifier: "VisionImageUrl" })

/** An image given inline. The label is checked against the bytes, never trusted. */
export const ImageByBase64 = Schema.Struct({
  base64: Schema.String.annotations({ description: "Base64 of the image bytes (a data: URL prefix is accepted)" }),
  mimeType: Schema.optional(Schema.String.annotations({ description: "Declared type, e.g. image/png; must match the bytes" })),
  mime_type: Schema.optional(Schema.String.annotations({ description: "Alias of mimeType" }))
}).annotations({ identifier: "VisionImageBase64" })

export const ImageInput = Schema.Union(ImageByUrl, ImageByBase64).annotations({ identifier: "VisionImage" })
export type ImageInput = typeof ImageInput.Type

/** Fields shared by the JSON and multipart forms. */
const commonFields = {
  prompt: Schema.optional(Schema.String.pipe(Schema.maxLength(32_000)).annotations({ description: "What to ask about the image(s). Analyze: the whole instruction (default: a detailed analysis). Presets: extra instructions appended to the fixed preset prompt." })),
  model: Schema.optional(Schema.String.annotations({ description: "Model id from the catalog or a custom provider. Default VISION_DEFAULT_MODEL (gpt-4o-mini). A catalog model without vision support is upgraded to a vision model of the same provider; the answer's model says which served." })),
  max_tokens: Schema.optional(Schema.Int.pipe(Schema.between(1, 32_768)).annotations({ description: "Upper bound of output tokens" })),
  detail: Schema.optional(Schema.Literal("auto", "low", "high").annotations({ description: "Image detail hint (OpenAI-format providers; ignored by others)" }))
}

export const VisionJsonRequest = Schema.Struct({
  image_url: Schema.optional(Schema.String.annotations({ description: "One image by URL (http/https or data:)" })),
  image_base64: Schema.optional(Schema.String.annotations({ description: "One image as base64 (with mime_type)" })),
  mime_type: Schema.optional(Schema.String.annotations({ description: "Declared type of image_base64; must match the bytes" })),
  image: Schema.optional(ImageInput.annotations({ description: "SDK form: {url} or {base64, mimeType}" })),
  images: Schema.optional(Schema.Array(ImageInput).annotations({ description: "Several images in one call: each {url} or {base64, mimeType}" })),
  ...commonFields,
  stream: Schema.optional(Schema.Boolean.annotations({ description: "Answer as SSE: data: {delta} lines, then a summary line with usage and cost, then data: [DONE]" })),
  response_format: Schema.optional(Schema.Literal("json", "text").annotations({ description: "json asks the model for one JSON object (structured output); default text" })),
  categories: Schema.optional(Schema.Array(Schema.String.pipe(Schema.maxLength(200))).pipe(Schema.maxItems(200)).annotations({ description: "Classify only: the labels to choose from" }))
}).annotations({
  identifier: "VisionRequest",
  description: "Images are taken in this order: image_url, image_base64, image, images[]. Image indexes in errors count in that order from 0."
})
export type VisionJsonRequest = typeof VisionJsonRequest.Type

/** The multipart form, for the OpenAPI document (the handler reads the parts itself, without temporary files). */
export const VisionMultipartRequest = Schema.Struct({
  file: Schema.optional(Multipart.FilesSchema.annotations({ description: "One or several image files (repeat the field)" })),
  "files[]": Schema.optional(Multipart.FilesSchema.annotations({ description: "Image files, array-style field name" })),
  prompt: Schema.optional(Schema.String),
  model: Schema.optional(Schema.String),
  max_tokens: Schema.optional(Schema.String),
  detail: Schema.optional(Schema.String),
  stream: Schema.optional(Schema.String.annotations({ description: "true for SSE" })),
  response_format: Schema.optional(Schema.String.annotations({ description: "json or text" })),
  categories: Schema.optional(Schema.String.annotations({ description: "Classify only: comma-separated labels" }))
}).annotations({
  identifier: "VisionMultipartRequest",
  description: "Files are taken in the order of the parts. Error responses name the file (file_name) and its index."
})

export const VisionUsage = Schema.Struct({
  promptTokens: Schema.Number,
  completionTokens: Schema.Number,
  totalTokens: Schema.Number
}).annotations({ identifier: "VisionUsage" })

export const VisionCost = Schema.Struct({
  providerCostUsd: Schema.NullOr(Schema.Number),
  serviceChargeUsd: Schema.Number,
  markupPercentage: Schema.Number
}).annotations({ identifier: "VisionCost" })

const answerFields = {
  model: Schema.String.annotations({ description: "The model that served the request (after any vision upgrade)" }),
  provider: Schema.String,
  usage: VisionUsage,
  cost: VisionCost
}

export const VisionAnalysis = Schema.Struct({ analysis: Schema.String, ...answerFields }).annotations({
  identifier: "VisionAnalysis"
})

export const VisionDescription = Schema.Struct({ description: Schema.String, ...answerFields }).annotations({
  identifier: "VisionDescription"
})

export const VisionText = Schema.Struct({ text: Schema.String, ...answerFields }).annotations({
  identifier: "VisionOcr"
})

export const VisionClassification = Schema.Struct({
  classification: Schema.Unknown.annotations({ description: "The model's JSON answer parsed; null when it was not valid JSON" }),
  raw: Schema.String.annotations({ description: "The model's answer as text" }),
  ...answerFields
}).annotations({ identifier: "VisionClassification" })
