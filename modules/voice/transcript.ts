/**
 * A transcript as every STT provider is normalised to (seconds, optional speakers), and its five wire renderings:
 * `json`, `text`, `srt`, `vtt`, `verbose_json`. SRT and VTT are built from the provider's timings.
 */
import type { TranscriptionFormat } from "./registry.ts"

export type Speaker = string | number

export interface TranscriptWord {
  readonly word: string
  readonly start: number
  readonly end: number
  readonly speaker?: Speaker | undefined
}

export interface TranscriptSegment {
  readonly start: number
  readonly end: number
  readonly text: string
  readonly speaker?: Speaker | undefined
}

export interface Transcript {
  readonly text: string
  readonly language: string | null
  /** Audio duration in seconds as the provider reported it; null when it did not (then not billed). */
  readonly durationSeconds: number | null
  readonly segments: ReadonlyArray<TranscriptSegment>
  readonly words: ReadonlyArray<TranscriptWord>
}

const SENTENCE_END = /[.!?…]["')\]]?$/
const MAX_WORDS_PER_SEGMENT = 16

/** Segments from words when the provider gives no utterances: a new one at sentence ends and speaker turns. */
export const segmentsFromWords = (words: ReadonlyArray<TranscriptWord>): Array<TranscriptSegment> => {
  const segments: Array<TranscriptSegment> = []
  let current: Array<TranscriptWord> = []
  const flush = () => {
    const first = current[0]
    const last = current[current.length - 1]
    if (first && last) {
      segments.push({
        start: first.start,
        end: last.end,
        text: current.map((w) => w.word).join(" "),
        ...(first.speaker === undefined ? {} : { speaker: first.speaker })
      })
    }
    current = []
  }
  for (const word of words) {
    const previous = current[current.length - 1]
    if (previous && previous.speaker !== word.speaker) flush()
    current.push(word)
    if (SENTENCE_END.test(word.word) || current.length >= MAX_WORDS_PER_SEGMENT) flush()
  }
  flush()
  return segments
}

/** Segments to render as subtitles; a transcript without timings becomes one cue over its duration. */
const cues = (transcript: Transcript): ReadonlyArray<TranscriptSegment> => {
  if (transcript.segments.length > 0) return transcript.segments
  if (transcript.text.trim().length === 0) return []
  return [{ start: 0, end: Math.max(transcript.durationSeconds ?? 0, 1), text: transcript.text.trim() }]
}

const timestamp = (seconds: number, separator: "," | ".") => {
  const totalMs = Math.max(0, Math.round(seconds * 1000))
  const ms = totalMs % 1000
  const totalSeconds = Math.floor(totalMs / 1000)
  const pad = (n: number, width = 2) => String(n).padStart(width, "0")
  return `${pad(Math.floor(totalSeconds / 3600))}:${pad(Math.floor(totalSeconds / 60) % 60)}:${pad(totalSeconds % 60)}${separator}${pad(ms, 3)}`
}

/** A cue's end never precedes its start (some providers report zero-length words). */
const endOf = (cue: TranscriptSegment) => Math.max(cue.end, cue.start + 0.001)

const cueText = (text: string) => text.trim().replace(/\r?\n\s*\n/g, "\n").replace(/-->/g, "->")

export const toSrt = (transcript: Transcript): string =>
  cues(transcript)
    .map((cue, index) => {
      const speaker = cue.speaker === undefined ? "" : `[Speaker ${cue.speaker}] `
      return `${index + 1}\n${timestamp(cue.start, ",")} --> ${timestamp(endOf(cue), ",")}\n${speaker}${cueText(cue.text)}\n`
    })
    .join("\n")

const escapeVtt = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")

export const toVtt = (transcript: Transcript): string =>
  ["WEBVTT", ""]
    .concat(
      cues(transcript).map((cue) => {
        const body = escapeVtt(cueText(cue.text))
        const text = cue.speaker === undefined ? body : `<v Speaker ${cue.speaker}>${body}</v>`
        return `${timestamp(cue.start, ".")} --> ${timestamp(endOf(cue), ".")}\n${text}\n`
      })
    )
    .join("\n")

const round3 = (n: number) => Math.round(n * 1000) / 1000

export const toVerboseJson = (transcript: Transcript, provider: string, model: string) => ({
  text: transcript.text,
  language: transcript.language,
  duration: transcript.durationSeconds,
  provider,
  model,
  segments: transcript.segments.map((segment, id) => ({
    id,
    start: round3(segment.start),
    end: round3(segment.end),
    text: segment.text,
    ...(segment.speaker === undefined ? {} : { speaker: segment.speaker })
  })),
  words: transcript.words.map((word) => ({
    word: word.word,
    start: round3(word.start),
    end: round3(word.end),
    ...(word.speaker === undefined ? {} : { speaker: word.speaker })
  }))
})

/** The response body of `format`: a string for text formats, an object for the JSON ones. */
export const render = (
  transcript: Transcript,
  format: TranscriptionFormat,
  provider: string,
  model: string
): { readonly kind: "json"; readonly body: unknown } | { readonly kind: "text"; readonly body: string } => {
  switch (format) {
    case "json":
      return { kind: "json", body: { text: transcript.text } }
    case "verbose_json":
      return { kind: "json", body: toVerboseJson(transcript, provider, model) }
    case "text":
      return { kind: "text", body: transcript.text }
    case "srt":
      return { kind: "text", body: toSrt(transcript) }
    case "vtt":
      return { kind: "text", body: toVtt(transcript) }
  }
}
