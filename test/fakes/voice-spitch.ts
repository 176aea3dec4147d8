/** Fake Spitch (the regional provider): TTS `POST /v1/speech` and STT `POST /v1/transcriptions` (multipart `content`). */
import { type FakeBase, fakeAudio, parseForm, sendAudio, sendJson, startFake } from "./voice-server.ts"

const FORMAT_TYPES: Record<string, string> = {
  wav: "audio/wav",
  mp3: "audio/mpeg",
  ogg_opus: "audio/ogg",
  webm_opus: "audio/webm",
  flac: "audio/flac",
  pcm_s16le: "audio/pcm"
}
const LANGUAGES = ["yo", "en", "ha", "ig", "am", "pcm"]

export interface SpitchFake extends FakeBase {
  segments: Array<{ start: number; end: number; text: string }>
}

const error = (status: number, message: string, code: string) => ({ error: { message, type: status === 401 ? "authentication_error" : "invalid_request_error", code } })

export const startSpitchFake = async (options: { readonly keys?: ReadonlyArray<string> } = {}) => {
  const fake = await startFake(async (request, response, base) => {
    const self = base as SpitchFake
    const key = String(request.headers.authorization ?? "").replace(/^Bearer /, "")
    if (!base.keys.has(key)) return sendJson(response, 401, error(401, "invalid api key", "unauthorized"))
    if (request.method === "POST" && request.path === "/v1/speech") {
      const body = JSON.parse(request.body.toString("utf8")) as { text?: string; voice?: string; language?: string; format?: string }
      if (!LANGUAGES.includes(body.language ?? "")) return sendJson(response, 422, error(422, "unsupported language", "invalid_language"))
      const contentType = FORMAT_TYPES[body.format ?? "wav"]
      if (!contentType) return sendJson(response, 422, error(422, "unsupported format", "invalid_format"))
      const label = `spitch:${body.voice ?? ""}:${body.language ?? ""}:${body.format ?? ""}:${body.text ?? ""}`
      return sendAudio(base, response, contentType, fakeAudio(label, base.audio.size))
    }
    if (request.method === "POST" && request.path === "/v1/transcriptions") {
      const form = await parseForm(request)
      const content = form.get("content")
      if (!(content instanceof File)) return sendJson(response, 422, error(422, "content is required", "missing_content"))
      const language = String(form.get("language") ?? "")
      if (!LANGUAGES.includes(language)) return sendJson(response, 422, error(422, "unsupported language", "invalid_language"))
      return sendJson(response, 200, {
        request_id: "sp-req",
        text: self.segments.map((s) => s.text).join(" "),
        ...(form.get("timestamp") === "none" ? {} : { segments: self.segments })
      })
    }
    return sendJson(response, 404, error(404, "not found", "not_found"))
  }, options)
  return Object.assign(fake, {
    segments: [
      { start: 0, end: 1.8, text: "Ẹ kú àárọ̀." },
      { start: 1.8, end: 3.6, text: "Báwo ni?" }
    ]
  }) satisfies SpitchFake
}
