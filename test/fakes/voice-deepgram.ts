/** Fake Deepgram: Aura TTS `POST /v1/speak?model=…&encoding=…` and Nova STT `POST /v1/listen?…` (raw audio body). */
import { type FakeBase, fakeAudio, sendAudio, sendJson, startFake } from "./voice-server.ts"

const CONTENT_TYPES: Record<string, string> = {
  mp3: "audio/mpeg",
  opus: "audio/ogg",
  aac: "audio/aac",
  flac: "audio/flac",
  linear16: "audio/l16",
  mulaw: "audio/basic",
  alaw: "audio/basic"
}

export interface DeepgramFake extends FakeBase {
  /** Words of the canned transcript: `[word, start, end, speaker]`. */
  words: Array<readonly [string, number, number, number]>
  duration: number | undefined
}

const defaultWords = (): Array<readonly [string, number, number, number]> => [
  ["Hi", 0.1, 0.4, 0],
  ["there.", 0.4, 0.9, 0],
  ["Hello", 1.5, 1.9, 1],
  ["back.", 1.9, 2.4, 1]
]

export const startDeepgramFake = async (options: { readonly keys?: ReadonlyArray<string> } = {}) => {
  const fake = await startFake(async (request, response, base) => {
    const self = base as DeepgramFake
    const key = String(request.headers.authorization ?? "").replace(/^Token /, "")
    if (!base.keys.has(key)) {
      return sendJson(response, 401, { err_code: "INVALID_AUTH", err_msg: "Invalid credentials.", request_id: "dg-req" })
    }
    if (request.method === "POST" && request.path === "/v1/speak") {
      const model = request.query.get("model") ?? ""
      const encoding = request.query.get("encoding") ?? "mp3"
      const container = request.query.get("container")
      if (!model.startsWith("aura-")) return sendJson(response, 400, { err_code: "Bad Request", err_msg: "unknown model", request_id: "dg-req" })
      if (!CONTENT_TYPES[encoding]) return sendJson(response, 400, { err_code: "Bad Request", err_msg: "unsupported encoding", request_id: "dg-req" })
      const body = JSON.parse(request.body.toString("utf8")) as { text?: string }
      const contentType = container === "wav" ? "audio/wav" : container === "ogg" ? "audio/ogg" : CONTENT_TYPES[encoding] ?? "audio/mpeg"
      return sendAudio(base, response, contentType, fakeAudio(`deepgram:${model}:${encoding}:${container ?? ""}:${body.text ?? ""}`, base.audio.size))
    }
    if (request.method === "POST" && request.path === "/v1/listen") {
      if (!String(request.headers["content-type"] ?? "").startsWith("audio/")) {
        return sendJson(response, 400, { err_code: "Bad Request", err_msg: "unsupported content type", request_id: "dg-req" })
      }
      if (request.body.length === 0) return sendJson(response, 400, { err_code: "Bad Request", err_msg: "empty audio", request_id: "dg-req" })
      const diarize = request.query.get("diarize") === "true"
      const words = self.words.map(([word, start, end, speaker]) => ({
        word: word.toLowerCase().replace(/[.]/g, ""),
        start,
        end,
        confidence: 0.98,
        punctuated_word: word,
        ...(diarize ? { speaker, speaker_confidence: 0.9 } : {})
      }))
      const transcript = self.words.map(([word]) => word).join(" ")
      const utterances = request.query.get("utterances") === "true"
        ? [0, 1].map((speaker) => {
          const own = words.filter((_, i) => self.words[i]?.[3] === speaker)
          return {
            start: own[0]?.start ?? 0,
            end: own[own.length - 1]?.end ?? 0,
            confidence: 0.97,
            channel: 0,
            transcript: own.map((w) => w.punctuated_word).join(" "),
            words: own,
            ...(diarize ? { speaker } : {}),
            id: `utt-${speaker}`
          }
        }).filter((u) => u.words.length > 0)
        : undefined
      return sendJson(response, 200, {
        metadata: {
          request_id: "dg-req",
          ...(self.duration === undefined ? {} : { duration: self.duration }),
          channels: 1,
          models: ["nova-3"]
        },
        results: {
          channels: [{ alternatives: [{ transcript, confidence: 0.98, words }] }],
          ...(utterances ? { utterances } : {})
        }
      })
    }
    return sendJson(response, 404, { err_code: "NOT_FOUND", err_msg: "not found", request_id: "dg-req" })
  }, options)
  return Object.assign(fake, { words: defaultWords(), duration: 2.5 as number | undefined }) satisfies DeepgramFake
}
