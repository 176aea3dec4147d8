/** Which adapter serves each provider; adding a provider means a sibling file and one line here. */
import type { VoiceProvider } from "../registry.ts"
import { assemblyaiTranscription } from "./assemblyai.ts"
import { cartesiaSpeech } from "./cartesia.ts"
import { deepgramSpeech, deepgramTranscription } from "./deepgram.ts"
import { elevenlabsSpeech } from "./elevenlabs.ts"
import { localSpeech } from "./local.ts"
import { openaiSpeech, openaiTranscription } from "./openai.ts"
import { spitchSpeech, spitchTranscription } from "./spitch.ts"
import type { SpeechAdapter, TranscriptionAdapter } from "./types.ts"

export const speechAdapters: Partial<Record<VoiceProvider, SpeechAdapter>> = {
  openai: openaiSpeech,
  deepgram: deepgramSpeech,
  cartesia: cartesiaSpeech,
  elevenlabs: elevenlabsSpeech,
  spitch: spitchSpeech,
  local: localSpeech
}

export const transcriptionAdapters: Partial<Record<VoiceProvider, TranscriptionAdapter>> = {
  openai: openaiTranscription,
  deepgram: deepgramTranscription,
  assemblyai: assemblyaiTranscription,
  spitch: spitchTranscription
}
