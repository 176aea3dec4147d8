/**
 * ElevenLabs: `POST /v1/text-to-speech/{voice_id}` (or `/stream` for chunked delivery) with `output_format` in the
 * query and `xi-api-key`. No AAC or FLAC output.
 */
import type { SpeechFormat } from "../registry.ts"
import { secret, send } from "../upstream.ts"
import type { SpeechAdapter } from "./types.ts"

const OUTPUT_FORMAT: Partial<Record<SpeechFormat, string>> = {
  mp3: "mp3_44100_128",
  opus: "opus_48000_128",
  wav: "wav_44100",
  pcm: "pcm_24000"
}

export const elevenlabsSpeech: SpeechAdapter = (upstream, request) => {
  const voice = encodeURIComponent(request.voice ?? "")
  const query = new URLSearchParams({ output_format: OUTPUT_FORMAT[request.format] ?? "mp3_44100_128" })
  return send("elevenlabs", `${upstream.baseUrl}/v1/text-to-speech/${voice}${request.stream ? "/stream" : ""}?${query}`, {
    method: "POST",
    headers: { "xi-api-key": secret(upstream), "content-type": "application/json" },
    body: JSON.stringify({
      text: request.input,
      model_id: request.model.id,
      ...(request.language === undefined ? {} : { language_code: request.language })
    })
  })
}
