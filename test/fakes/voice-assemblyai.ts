/**
 * Fake AssemblyAI: `POST /v2/upload` (raw bytes → upload_url), `POST /v2/transcript` (→ queued), and
 * `GET /v2/transcript/{id}` moving queued → processing → completed (or error) over a scripted number of polls.
 * Times in milliseconds, speakers "A"/"B" with `speaker_labels`.
 */
import * as Crypto from "node:crypto"
import { type FakeBase, sendJson, startFake } from "./voice-server.ts"

interface Job {
  readonly id: string
  readonly audioUrl: string
  readonly speakerLabels: boolean
  readonly languageCode: string | undefined
  polls: number
}

export interface AssemblyAIFake extends FakeBase {
  /** Polls answered `processing` before `completed`. */
  pollsUntilDone: number
  /** When set, the transcript ends in status `error` with this message. */
  transcriptError: string | undefined
  readonly uploads: Map<string, Buffer>
  readonly jobs: Map<string, Job>
  /** `[text, startMs, endMs, speaker]`. */
  words: Array<readonly [string, number, number, string]>
  audioDuration: number
}

export const startAssemblyAIFake = async (options: { readonly keys?: ReadonlyArray<string> } = {}) => {
  const fake = await startFake(async (request, response, base) => {
    const self = base as AssemblyAIFake
    if (!base.keys.has(String(request.headers.authorization ?? ""))) {
      return sendJson(response, 401, { error: "Authentication error, API token missing/invalid" })
    }
    if (request.method === "POST" && request.path === "/v2/upload") {
      if (request.body.length === 0) return sendJson(response, 400, { error: "empty upload" })
      const id = Crypto.randomUUID()
      self.uploads.set(id, request.body)
      return sendJson(response, 200, { upload_url: `${base.url}/uploads/${id}` })
    }
    if (request.method === "POST" && request.path === "/v2/transcript") {
      const body = JSON.parse(request.body.toString("utf8")) as {
        audio_url?: string
        speech_models?: Array<string>
        speaker_labels?: boolean
        language_code?: string
      }
      const uploadId = body.audio_url?.split("/uploads/")[1] ?? ""
      if (!self.uploads.has(uploadId)) return sendJson(response, 400, { error: "audio_url is not a valid upload" })
      if (!Array.isArray(body.speech_models)) return sendJson(response, 400, { error: "speech_models is required" })
      const job: Job = {
        id: Crypto.randomUUID(),
        audioUrl: body.audio_url ?? "",
        speakerLabels: body.speaker_labels === true,
        languageCode: body.language_code,
        polls: 0
      }
      self.jobs.set(job.id, job)
      return sendJson(response, 200, { id: job.id, status: "queued", audio_url: job.audioUrl })
    }
    const poll = request.path.match(/^\/v2\/transcript\/([^/]+)$/)
    if (request.method === "GET" && poll) {
      const job = self.jobs.get(poll[1] ?? "")
      if (!job) return sendJson(response, 404, { error: "Transcript not found" })
      job.polls += 1
      if (job.polls <= self.pollsUntilDone) return sendJson(response, 200, { id: job.id, status: "processing" })
      if (self.transcriptError) return sendJson(response, 200, { id: job.id, status: "error", error: self.transcriptError })
      const words = self.words.map(([text, start, end, speaker]) => ({
        text,
        start,
        end,
        confidence: 0.95,
        ...(job.speakerLabels ? { speaker } : { speaker: null })
      }))
      const utterances = job.speakerLabels
        ? ["A", "B"].map((speaker) => {
          const own = words.filter((_, i) => self.words[i]?.[3] === speaker)
          return {
            speaker,
            start: own[0]?.start ?? 0,
            end: own[own.length - 1]?.end ?? 0,
            confidence: 0.95,
            text: own.map((w) => w.text).join(" "),
            words: own
          }
        }).filter((u) => u.words.length > 0)
        : null
      return sendJson(response, 200, {
        id: job.id,
        status: "completed",
        text: self.words.map(([text]) => text).join(" "),
        audio_duration: self.audioDuration,
        language_code: job.languageCode ?? "en_us",
        words,
        utterances
      })
    }
    return sendJson(response, 404, { error: "Not found" })
  }, options)
  return Object.assign(fake, {
    pollsUntilDone: 2,
    transcriptError: undefined as string | undefined,
    uploads: new Map<string, Buffer>(),
    jobs: new Map<string, Job>(),
    words: [
      ["Good", 100, 400, "A"],
      ["morning.", 400, 900, "A"],
      ["Morning", 1500, 1900, "B"],
      ["to", 1900, 2000, "B"],
      ["you.", 2000, 2400, "B"]
    ] as Array<readonly [string, number, number, string]>,
    audioDuration: 3
  }) satisfies AssemblyAIFake
}
