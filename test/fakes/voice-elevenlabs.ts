/** Fake ElevenLabs: `POST /v1/text-to-speech/{voice_id}` and `…/stream`, `output_format` in the query. */
import { fakeAudio, sendAudio, sendJson, startFake } from "./voice-server.ts"

const FORMAT_TYPES: Record<string, string> = { mp3: "audio/mpeg", opus: "audio/opus", wav: "audio/wav", pcm: "audio/pcm" }

export const startElevenLabsFake = (options: { readonly keys?: ReadonlyArray<string> } = {}) =>
  startFake(async (request, response, base) => {
    if (!base.keys.has(String(request.headers["xi-api-key"] ?? ""))) {
      return sendJson(response, 401, { detail: { status: "invalid_api_key", message: "Invalid API key" } })
    }
    const match = request.path.match(/^\/v1\/text-to-speech\/([^/]+)(\/stream)?$/)
    if (request.method === "POST" && match) {
      const body = JSON.parse(request.body.toString("utf8")) as { text?: string; model_id?: string }
      if (!body.text) return sendJson(response, 422, { detail: [{ loc: ["body", "text"], msg: "field required", type: "value_error.missing" }] })
      const outputFormat = request.query.get("output_format") ?? "mp3_44100_128"
      const family = outputFormat.split("_")[0] ?? ""
      const contentType = FORMAT_TYPES[family]
      if (!contentType) return sendJson(response, 400, { detail: { status: "invalid_output_format", message: "bad output_format" } })
      const label = `elevenlabs:${body.model_id ?? ""}:${match[1] ?? ""}:${outputFormat}:${match[2] ? "stream" : "bytes"}:${body.text}`
      return sendAudio(base, response, contentType, fakeAudio(label, base.audio.size))
    }
    return sendJson(response, 404, { detail: { status: "not_found", message: "not found" } })
  }, options)
