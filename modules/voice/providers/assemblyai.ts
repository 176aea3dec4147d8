/**
 * AssemblyAI: `POST /v2/upload` (raw bytes → `upload_url`), `POST /v2/transcript` (→ id, queued), then poll
 * `GET /v2/transcript/{id}` until `completed` or `error`, all inside the request (the caller bounds it with the
 * provider timeout). Auth is the bare key in `Authorization`. Word and utterance times are milliseconds.
 */
import { Duration, Effect } from "effect"
import { segmentsFromWords, type Transcript, type TranscriptSegment, type TranscriptWord } from "../transcript.ts"
import { field, secret, sendJson, type Upstream, UpstreamError } from "../upstream.ts"
import type { TranscriptionAdapter } from "./types.ts"

const headers = (upstream: Upstream, contentType: string) => ({ authorization: secret(upstream), "content-type": contentType })

const missing = (what: string) =>
  new UpstreamError({ provider: "assemblyai", kind: "failed", status: null, message: `assemblyai answered without ${what}` })

export const assemblyaiTranscription: TranscriptionAdapter = (upstream, request, options) =>
  Effect.gen(function*() {
    const uploaded = field.record(
      yield* sendJson("assemblyai", `${upstream.baseUrl}/v2/upload`, {
        method: "POST",
        headers: headers(upstream, "application/octet-stream"),
        body: request.file.bytes
      })
    )
    const audioUrl = field.string(uploaded.upload_url)
    if (audioUrl === undefined) return yield* missing("upload_url")
    const created = field.record(
      yield* sendJson("assemblyai", `${upstream.baseUrl}/v2/transcript`, {
        method: "POST",
        headers: headers(upstream, "application/json"),
        body: JSON.stringify({
          audio_url: audioUrl,
          speech_models: ["universal-2"],
          speaker_labels: request.diarize,
          ...(request.language === undefined ? {} : { language_code: request.language })
        })
      })
    )
    const id = field.string(created.id)
    if (id === undefined) return yield* missing("a transcript id")
    let transcript = created
    while (transcript.status !== "completed") {
      if (transcript.status === "error") {
        return yield* new UpstreamError({
          provider: "assemblyai",
          kind: "rejected",
          status: null,
          message: field.string(transcript.error) ?? "transcription failed"
        })
      }
      yield* Effect.sleep(Duration.millis(options.pollIntervalMs))
      transcript = field.record(
        yield* sendJson("assemblyai", `${upstream.baseUrl}/v2/transcript/${encodeURIComponent(id)}`, {
          method: "GET",
          headers: { authorization: secret(upstream) }
        })
      )
    }
    return toTranscript(transcript, request.diarize)
  })

const seconds = (ms: unknown) => {
  const value = field.number(ms)
  return value === undefined ? undefined : value / 1000
}

const toTranscript = (body: Record<string, unknown>, diarize: boolean): Transcript => {
  const speakerOf = (value: unknown) => (diarize ? field.string(value) : undefined)
  const words: Array<TranscriptWord> = field.array(body.words).flatMap((raw) => {
    const w = field.record(raw)
    const start = seconds(w.start)
    const end = seconds(w.end)
    const word = field.string(w.text)
    if (start === undefined || end === undefined || word === undefined) return []
    const speaker = speakerOf(w.speaker)
    return [{ word, start, end, ...(speaker === undefined ? {} : { speaker }) }]
  })
  const utterances: Array<TranscriptSegment> = field.array(body.utterances).flatMap((raw) => {
    const u = field.record(raw)
    const start = seconds(u.start)
    const end = seconds(u.end)
    const text = field.string(u.text)
    if (start === undefined || end === undefined || text === undefined) return []
    const speaker = speakerOf(u.speaker)
    return [{ start, end, text: text.trim(), ...(speaker === undefined ? {} : { speaker }) }]
  })
  return {
    text: (field.string(body.text) ?? "").trim(),
    language: field.string(body.language_code) ?? null,
    durationSeconds: field.number(body.audio_duration) ?? null,
    segments: utterances.length > 0 ? utterances : segmentsFromWords(words),
    words
  }
}
