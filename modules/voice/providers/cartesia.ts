/**
 * Cartesia Sonic: `POST /tts/bytes` with a `Cartesia-Version` header; the output format is an object naming
 * container, encoding and sample rate. Only mp3, wav and raw PCM exist there.
 */
import type { SpeechFormat } from "../registry.ts"
import { bearer, send } from "../upstream.ts"
import type { SpeechAdapter } from "./types.ts"

export const CARTESIA_VERSION = "2025-04-16"

const OUTPUT_FORMAT: Partial<Record<SpeechFormat, Record<string, string | number>>> = {
  mp3: { container: "mp3", sample_rate: 44100, bit_rate: 128000 },
  wav: { container: "wav", encoding: "pcm_s16le", sample_rate: 44100 },
  pcm: { container: "raw", encoding: "pcm_s16le", sample_rate: 24000 }
}

export const cartesiaSpeech: SpeechAdapter = (upstream, request) =>
  send("cartesia", `${upstream.baseUrl}/tts/bytes`, {
    method: "POST",
    headers: {
      authorization: bearer(upstream),
      "cartesia-version": CARTESIA_VERSION,
      "content-type": "application/json"
    },
    body: JSON.stringify({
      model_id: request.model.id,
      transcript: request.input,
      voice: { mode: "id", id: request.voice },
      output_format: OUTPUT_FORMAT[request.format],
      ...(request.language === undefined ? {} : { language: request.language })
    })
  })
