/**
 * Voice over HTTP (contract §4.8): TTS and STT with the API key in `SERVICE_API_KEY`, and the public registry.
 * Errors use the flat envelope of `/api/ai/*` (§7.5).
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { errorResponse } from "../../schemas/errors.ts"
import {
  SpeechDocument,
  SpeechRequest,
  TranscriptionDocument,
  TranscriptionJson,
  TranscriptionRequest,
  TranscriptionVerbose,
  VoicesDocument
} from "../../schemas/voice.ts"
import { ServiceKeyAuth } from "../auth/Api.ts"

const flat = (status: number) => errorResponse("flat", status)

export class VoiceApi extends HttpApiGroup.make("voice")
  .add(
    HttpApiEndpoint.post("createSpeech", "/api/ai/audio/speech")
      .setPayload(SpeechRequest)
      .addSuccess(HttpApiSchema.Uint8Array({ contentType: "audio/mpeg" }))
      .addError(flat(400))
      .addError(flat(402))
      .addError(flat(403))
      .addError(flat(429))
      .addError(flat(502))
      .middleware(ServiceKeyAuth)
  )
  .add(
    HttpApiEndpoint.post("createTranscription", "/api/ai/audio/transcriptions")
      .setPayload(TranscriptionRequest)
      .addSuccess(Schema.Union(TranscriptionVerbose, TranscriptionJson))
      .addError(flat(400))
      .addError(flat(403))
      .addError(flat(429))
      .addError(flat(502))
      .middleware(ServiceKeyAuth)
  )
  .add(HttpApiEndpoint.get("speechCapabilities", "/api/ai/audio/speech").addSuccess(SpeechDocument))
  .add(HttpApiEndpoint.get("transcriptionCapabilities", "/api/ai/audio/transcriptions").addSuccess(TranscriptionDocument))
  .add(HttpApiEndpoint.get("listVoices", "/api/ai/audio/voices").addSuccess(VoicesDocument))
{}
