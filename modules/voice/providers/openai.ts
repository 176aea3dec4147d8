/**
 * OpenAI: `POST /audio/speech` (JSON → audio) and `POST /audio/transcriptions` (multipart). Transcriptions are
 * always asked for as `verbose_json` with word and segment timings, so every response format (and billing, which
 * needs the duration) comes from one answer.
 */
import { Effect } from "effect"
import type { Transcript, TranscriptSegment, TranscriptWord } from "../transcript.ts"
import { bearer, field, send, sendJson } from "../upstream.ts"
import type { SpeechAdapter, TranscriptionAdapter } from "./types.ts"

export const openaiSpeech: SpeechAdapter = (upstream, request) =>
  send("openai", `${upstream.baseUrl}/audio/speech`, {
    method: "POST",
    headers: { authorization: bearer(upstream), "content-type": "application/json" },
    body: JSON.stringify({
      model: request.model.id,
      input: request.input,
      voice: request.voice,
      response_format: request.format,
      ...(request.speed === undefined ? {} : { speed: request.speed })
    })
  })

export const openaiTranscription: TranscriptionAdapter = (upstream, request) => {
  const form = new FormData()
  form.append("file", new Blob([request.file.bytes], { type: request.file.mimeType }), request.file.fileName)
  form.append("model", request.model.id)
  form.append("response_format", "verbose_json")
  form.append("timestamp_granularities[]", "word")
  form.append("timestamp_granularities[]", "segment")
  if (request.language !== undefined) form.append("language", request.language)
  if (request.prompt !== undefined) form.append("prompt", request.prompt)
  if (request.temperature !== undefined) form.append("temperature", String(request.temperature))
  return sendJson("openai", `${upstream.baseUrl}/audio/transcriptions`, {
    method: "POST",
    headers: { authorization: bearer(upstream) },
    body: form
  }).pipe(Effect.map(toTranscript))
}

const toTranscript = (json: unknown): Transcript => {
  const body = field.record(json)
  const segments: Array<TranscriptSegment> = field.array(body.segments).flatMap((raw) => {
    const s = field.record(raw)
    const start = field.number(s.start)
    const end = field.number(s.end)
    const text = field.string(s.text)
    return start === undefined || end === undefined || text === undefined ? [] : [{ start, end, text: text.trim() }]
  })
  const words: Array<TranscriptWord> = field.array(body.words).flatMap((raw) => {
    const w = field.record(raw)
    const start = field.number(w.start)
    const end = field.number(w.end)
    const word = field.string(w.word)
    return start === undefined || end === undefined || word === undefined ? [] : [{ word, start, end }]
  })
  const usage = field.record(body.usage)
  return {
    text: (field.string(body.text) ?? "").trim(),
    language: field.string(body.language) ?? null,
    durationSeconds: field.number(body.duration) ?? (usage.type === "duration" ? field.number(usage.seconds) ?? null : null),
    segments,
    words
  }
}
