/** Fake Cartesia: `POST /tts/bytes` with `Cartesia-Version` and a structured `output_format`. */
import { type FakeBase, fakeAudio, sendAudio, sendJson, startFake } from "./voice-server.ts"

export interface CartesiaFake extends FakeBase {
  /** Answers `model_sunsetted` for sonic-english, as the real service does since 2026-06-01. */
  sunsetSonicEnglish: boolean
}

const CONTAINER_TYPES: Record<string, string> = { mp3: "audio/mpeg", wav: "audio/wav", raw: "application/octet-stream" }

export const startCartesiaFake = async (options: { readonly keys?: ReadonlyArray<string> } = {}) => {
  const fake = await startFake(async (request, response, base) => {
    const self = base as CartesiaFake
    const key = String(request.headers.authorization ?? "").replace(/^Bearer /, "")
    if (!base.keys.has(key)) {
      return sendJson(response, 401, { error_code: "unauthorized", title: "Unauthorized", message: "Invalid API key", request_id: "c-req" })
    }
    if (!request.headers["cartesia-version"]) {
      return sendJson(response, 400, { error_code: "missing_version", title: "Bad request", message: "Cartesia-Version header required", request_id: "c-req" })
    }
    if (request.method === "POST" && request.path === "/tts/bytes") {
      const body = JSON.parse(request.body.toString("utf8")) as {
        model_id?: string
        transcript?: string
        voice?: { mode?: string; id?: string }
        output_format?: { container?: string; encoding?: string; sample_rate?: number }
      }
      if (body.model_id === "sonic-english" && self.sunsetSonicEnglish) {
        return sendJson(response, 400, { error_code: "model_sunsetted", title: "Model sunsetted", message: "sonic-english is no longer available", request_id: "c-req" })
      }
      const container = body.output_format?.container ?? ""
      if (!CONTAINER_TYPES[container] || !body.output_format?.sample_rate) {
        return sendJson(response, 400, { error_code: "invalid_output_format", title: "Bad request", message: "invalid output_format", request_id: "c-req" })
      }
      if (body.voice?.mode !== "id" || !body.voice.id) {
        return sendJson(response, 400, { error_code: "invalid_voice", title: "Bad request", message: "voice id required", request_id: "c-req" })
      }
      const label = `cartesia:${body.model_id}:${body.voice.id}:${container}:${body.transcript ?? ""}`
      return sendAudio(base, response, CONTAINER_TYPES[container] ?? "audio/mpeg", fakeAudio(label, base.audio.size))
    }
    return sendJson(response, 404, { error_code: "not_found", title: "Not found", message: "not found", request_id: "c-req" })
  }, options)
  return Object.assign(fake, { sunsetSonicEnglish: false }) satisfies CartesiaFake
}
