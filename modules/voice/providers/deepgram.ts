/**
 * Deepgram: Aura TTS `POST /v1/speak?model=…&encoding=…&container=…` (JSON `{text}` → audio) and Nova STT
 * `POST /v1/listen?model=…` with the raw audio as the body. Auth `Authorization: Token <key>`.
 */
import { Effect } from "effect"
import type { SpeechFormat } from "../registry.ts"
import { segmentsFromWords, type Speaker, type Transcript, type TranscriptSegment, type TranscriptWord } from "../transcript.ts"
import { field, secret, send, sendJson, type Upstream } from "../upstream.ts"
import type { SpeechAdapter, TranscriptionAdapter } from "./types.ts"

const ENCODING: Readonly<Record<SpeechFormat, Record<string, string>>> = {
  mp3: { encoding: "mp3" },
  opus: { encoding: "opus", container: "ogg" },
  aac: { encoding: "aac" },
  flac: { encoding: "flac" },
  wav: { encoding: "linear16", container: "wav", sample_rate: "24000" },
  pcm: { encoding: "linear16", container: "none", sample_rate: "24000" }
}

const auth = (upstream: Upstream) => `Token ${secret(upstream)}`

export const deepgramSpeech: SpeechAdapter = (upstream, request) => {
  const query = new URLSearchParams({ model: request.model.id, ...ENCODING[request.format] })
  return send("deepgram", `${upstream.baseUrl}/v1/speak?${query}`, {
    method: "POST",
    headers: { authorization: auth(upstream), "content-type": "application/json" },
    body: JSON.stringify({ text: request.input })
  })
}

export const deepgramTranscription: TranscriptionAdapter = (upstream, request) => {
  const query = new URLSearchParams({
    model: request.model.id,
    smart_format: "true",
    punctuate: "true",
    utterances: "true",
    diarize: String(request.diarize)
  })
  if (request.language !== undefined) query.set("language", request.language)
  return sendJson("deepgram", `${upstream.baseUrl}/v1/listen?${query}`, {
    method: "POST",
    headers: { authorization: auth(upstream), "content-type": request.file.mimeType },
    body: request.file.bytes
  }).pipe(Effect.map((json) => toTranscript(json, request.language, request.diarize)))
}

const speakerOf = (value: unknown, diarize: boolean): Speaker | undefined =>
  diarize ? field.number(value) : undefined

const toTranscript = (json: unknown, language: string | undefined, diarize: boolean): Transcript => {
  const body = field.record(json)
  const metadata = field.record(body.metadata)
  const results = field.record(body.results)
  const channel = field.record(field.array(results.channels)[0])
  const alternative = field.record(field.array(channel.alternatives)[0])
  const words: Array<TranscriptWord> = field.array(alternative.words).flatMap((raw) => {
    const w = field.record(raw)
    const start = field.number(w.start)
    const end = field.number(w.end)
    const word = field.string(w.punctuated_word) ?? field.string(w.word)
    if (start === undefined || end === undefined || word === undefined) return []
    const speaker = speakerOf(w.speaker, diarize)
    return [{ word, start, end, ...(speaker === undefined ? {} : { speaker }) }]
  })
  const utterances: Array<TranscriptSegment> = field.array(results.utterances).flatMap((raw) => {
    const u = field.record(raw)
    const start = field.number(u.start)
    const end = field.number(u.end)
    const text = field.string(u.transcript)
    if (start === undefined || end === undefined || text === undefined) return []
    const speaker = speakerOf(u.speaker, diarize)
    return [{ start, end, text: text.trim(), ...(speaker === undefined ? {} : { speaker }) }]
  })
  return {
    text: (field.string(alternative.transcript) ?? "").trim(),
    language: field.string(channel.detected_language) ?? language ?? null,
    durationSeconds: field.number(metadata.duration) ?? null,
    segments: utterances.length > 0 ? utterances : segmentsFromWords(words),
    words
  }
}
