/**
 * Vision endpoints (contract §4.7), header `SERVICE_API_KEY`, flat errors (§7.4): `POST /api/ai/vision` and the
 * presets `/api/ai/vision/describe`, `/ocr`, `/classify`. Each takes JSON or multipart/form-data and answers JSON,
 * or SSE with `stream` true.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { errorResponse } from "../../schemas/errors.ts"
import {
  VisionAnalysis,
  VisionClassification,
  VisionDescription,
  VisionJsonRequest,
  VisionMultipartRequest,
  VisionText
} from "../../schemas/vision.ts"
import { ServiceKeyAuth } from "../auth/Api.ts"
import { PRESET_PATHS } from "./presets.ts"

/** JSON or multipart: the handlers read the body themselves, so both forms are only declared here. */
export const VisionPayload = Schema.Union(VisionJsonRequest, HttpApiSchema.Multipart(VisionMultipartRequest))

const EventStream = HttpApiSchema.Text({ contentType: "text/event-stream" }).annotations({
  description: "With stream true: `data: {\"delta\":\"…\"}` lines as the model writes, then one `data:` line with " +
    "`done: true`, the answer field(s), `model`, `provider`, `usage` and `cost`, then `data: [DONE]`. An upstream " +
    "failure after the first byte is sent as `data: {\"error\":code,\"message\"}` before `data: [DONE]`."
})

const ERRORS_DOC = "400 `unsupported_format` or `image_too_large` names the offending image: `image_index` (from 0, " +
  "in request order), `param` (the field), `file_name` (multipart), `provider`, `reason`. Also 400 " +
  "`invalid_request`, `invalid_image`, `unsafe_url`, `fetch_failed`…, `model_not_found`, `provider_not_configured`; " +
  "403 credits exhausted; 415 unsupported body type; 502 upstream failure."

const endpoint = <const Name extends string, const Path extends `/${string}`>(name: Name, path: Path, summary: string) =>
  HttpApiEndpoint.post(name, path)
    .setPayload(VisionPayload)
    .addError(errorResponse("flat", 400))
    .addError(errorResponse("flat", 403))
    .addError(errorResponse("flat", 413))
    .addError(errorResponse("flat", 415))
    .addError(errorResponse("flat", 502))
    .annotate(OpenApi.Summary, summary)
    .annotate(OpenApi.Description, ERRORS_DOC)

export class VisionApi extends HttpApiGroup.make("vision")
  .add(
    endpoint("analyze", PRESET_PATHS.analyze, "Analyze images with a prompt (answer field `analysis`)")
      .addSuccess(VisionAnalysis)
      .addSuccess(EventStream)
  )
  .add(
    endpoint("describe", PRESET_PATHS.describe, "Describe images (fixed prompt; answer field `description`)")
      .addSuccess(VisionDescription)
      .addSuccess(EventStream)
  )
  .add(
    endpoint("ocr", PRESET_PATHS.ocr, "Transcribe the text in images (fixed prompt; answer field `text`)")
      .addSuccess(VisionText)
      .addSuccess(EventStream)
  )
  .add(
    endpoint("classify", PRESET_PATHS.classify, "Classify images (JSON answer parsed into `classification`, text in `raw`)")
      .addSuccess(VisionClassification)
      .addSuccess(EventStream)
  )
  .middleware(ServiceKeyAuth)
  .annotate(OpenApi.Title, "Vision")
{}
