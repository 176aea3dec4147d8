/**
 * Spitch, the contract's regional provider: TTS `POST /v1/speech` (JSON → audio) and STT
 * `POST /v1/transcriptions` (multipart `content`, `language`, `timestamp`). Auth `Bearer`. Spitch reports no
 * audio duration, so its transcriptions are not billed.
 */
import { Effect } from "effect"
import type { SpeechFormat } from "../registry.ts"
import type { Transcript, TranscriptSegment } from "../transcript.ts"
import { bearer, field, send, sendJson } from "../upstream.ts"
import type { SpeechAdapter, TranscriptionAdapter } from "./types.ts"

const FORMAT: Partial<Record<SpeechFormat, string>> = {
  mp3: "mp3",
  opus: "ogg_opus",
  flac: "flac",
  wav: "wav",
  pcm: "pcm_s16le"
}

export const spitchSpeech: SpeechAdapter = (upstream, request) =>
  send("spitch", `${upstream.baseUrl}/v1/speech`, {
    method: "POST",
    headers: { authorization: bearer(upstream), "content-type": "application/json" },
    body: JSON.stringify({
      text: request.input,
      voice: request.voice,
      language: request.language,
      format: FORMAT[request.format],
      ...(request.speed === undefined ? {} : { speed: request.speed })
    })
  })

export const spitchTranscription: TranscriptionAdapter = (upstream, request) => {
  const language = request.language ?? request.model.defaultLanguage ?? "en"
  const form = new FormData()
  form.append("content", new Blob([request.file.bytes], { type: request.file.mimeType }), request.file.fileName)
  form.append("language", language)
  form.append("timestamp", "sentence")
  return sendJson("spitch", `${upstream.baseUrl}/v1/transcriptions`, {
    method: "POST",
    headers: { authorization: bearer(upstream) },
    body: form
  }).pipe(Effect.map((json) => toTranscript(json, language)))
}

const toTranscript = (json: unknown, language: string): Transcript => {
  const body = field.record(json)
  const segments: Array<TranscriptSegment> = field.array(body.segments).flatMap((raw) => {
    const s = field.record(raw)
    const start = field.number(s.start)
    const end = field.number(s.end)
    const text = field.string(s.text)
    return start === undefined || end === undefined || text === undefined ? [] : [{ start, end, text: text.trim() }]
  })
  return {
    text: (field.string(body.text) ?? "").trim(),
    language,
    durationSeconds: field.number(body.duration) ?? null,
    segments,
    words: []
  }
}
