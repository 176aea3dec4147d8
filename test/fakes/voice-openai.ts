/** Fake OpenAI audio API: `POST /audio/speech` (JSON → chunked audio) and `POST /audio/transcriptions` (multipart). */
import { type FakeBase, fakeAudio, parseForm, sendAudio, sendJson, startFake } from "./voice-server.ts"

export const OPENAI_CONTENT_TYPES: Record<string, string> = {
  mp3: "audio/mpeg",
  opus: "audio/opus",
  aac: "audio/aac",
  flac: "audio/flac",
  wav: "audio/wav",
  pcm: "audio/pcm"
}

export interface OpenAIVoiceFake extends FakeBase {
  /** The `verbose_json` answer of the transcription endpoint. */
  transcription: Record<string, unknown>
}

export const defaultOpenAITranscription = () => ({
  task: "transcribe",
  language: "english",
  duration: 9.5,
  text: "Hello there. How are you today?",
  segments: [
    { id: 0, seek: 0, start: 0, end: 4.2, text: " Hello there.", tokens: [1, 2], temperature: 0, avg_logprob: -0.2, compression_ratio: 1.1, no_speech_prob: 0.01 },
    { id: 1, seek: 0, start: 4.2, end: 9.5, text: " How are you today?", tokens: [3, 4], temperature: 0, avg_logprob: -0.2, compression_ratio: 1.1, no_speech_prob: 0.01 }
  ],
  words: [
    { word: "Hello", start: 0, end: 0.6 },
    { word: "there", start: 0.6, end: 1.2 },
    { word: "How", start: 4.2, end: 4.6 },
    { word: "are", start: 4.6, end: 4.9 },
    { word: "you", start: 4.9, end: 5.2 },
    { word: "today", start: 5.2, end: 6 }
  ],
  usage: { type: "duration", seconds: 10 }
})

const VOICES = ["alloy", "echo", "fable", "onyx", "nova", "shimmer"]

const error = (message: string, type = "invalid_request_error", param: string | null = null, code: string | null = null) => ({
  error: { message, type, param, code }
})

export const startOpenAIVoiceFake = async (options: { readonly keys?: ReadonlyArray<string> } = {}) => {
  const fake = await startFake(async (request, response, base) => {
    const self = base as OpenAIVoiceFake
    const key = String(request.headers.authorization ?? "").replace(/^Bearer /, "")
    if (!base.keys.has(key)) {
      return sendJson(response, 401, error("Incorrect API key provided", "invalid_request_error", null, "invalid_api_key"))
    }
    if (request.method === "POST" && request.path.endsWith("/audio/speech")) {
      const body = JSON.parse(request.body.toString("utf8")) as Record<string, unknown>
      const format = typeof body.response_format === "string" ? body.response_format : "mp3"
      if (body.model !== "tts-1" && body.model !== "tts-1-hd") return sendJson(response, 404, error(`model ${String(body.model)} not found`))
      if (!VOICES.includes(String(body.voice))) return sendJson(response, 400, error("invalid voice", "invalid_request_error", "voice"))
      if (!OPENAI_CONTENT_TYPES[format]) return sendJson(response, 400, error("invalid response_format"))
      const label = `openai:${String(body.model)}:${String(body.voice)}:${format}:${String(body.input)}`
      return sendAudio(base, response, OPENAI_CONTENT_TYPES[format] ?? "audio/mpeg", fakeAudio(label, base.audio.size))
    }
    if (request.method === "POST" && request.path.endsWith("/audio/transcriptions")) {
      const form = await parseForm(request)
      const file = form.get("file")
      if (!(file instanceof File) || file.size === 0) return sendJson(response, 400, error("file is required", "invalid_request_error", "file"))
      if (form.get("model") !== "whisper-1") return sendJson(response, 400, error("invalid model", "invalid_request_error", "model"))
      const format = String(form.get("response_format") ?? "json")
      const transcription = self.transcription
      if (format === "verbose_json") return sendJson(response, 200, transcription)
      if (format === "json") return sendJson(response, 200, { text: transcription.text })
      response.writeHead(200, { "content-type": "text/plain" })
      response.end(String(transcription.text))
      return
    }
    return sendJson(response, 404, error("Not found"))
  }, options)
  return Object.assign(fake, { transcription: defaultOpenAITranscription() as Record<string, unknown> }) satisfies OpenAIVoiceFake
}
