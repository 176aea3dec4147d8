/** The two shapes a voice adapter implements: speech (text in, audio stream out) and transcription. */
import type { Effect } from "effect"
import type { SpeechFormat, SpeechModel, TranscriptionModel } from "../registry.ts"
import type { Transcript } from "../transcript.ts"
import type { Upstream, UpstreamError } from "../upstream.ts"

export interface SpeechRequest {
  readonly model: SpeechModel
  readonly input: string
  /** The resolved voice (null when baked into the model). */
  readonly voice: string | null
  readonly format: SpeechFormat
  readonly speed: number | undefined
  readonly language: string | undefined
  readonly stream: boolean
}

/** Resolves once the provider answered 2xx; the audio is read from the response body as it arrives. */
export type SpeechAdapter = (upstream: Upstream, request: SpeechRequest) => Effect.Effect<Response, UpstreamError>

export interface AudioFile {
  readonly bytes: Uint8Array<ArrayBuffer>
  readonly fileName: string
  /** Canonical MIME type of the detected container. */
  readonly mimeType: string
  readonly container: string
}

export interface TranscriptionRequest {
  readonly model: TranscriptionModel
  readonly file: AudioFile
  readonly language: string | undefined
  readonly prompt: string | undefined
  readonly temperature: number | undefined
  readonly diarize: boolean
}

export interface TranscriptionOptions {
  /** Pause between polls for asynchronous providers. */
  readonly pollIntervalMs: number
}

export type TranscriptionAdapter = (
  upstream: Upstream,
  request: TranscriptionRequest,
  options: TranscriptionOptions
) => Effect.Effect<Transcript, UpstreamError>
