/** Shared voice test setup: the six fake upstreams, the env pointing the gateway at them, BYOK keys, and calls. */
import { ProviderConnections } from "../../modules/connections/Service.ts"
import type { Gateway } from "../harness.ts"
import { Effect } from "effect"
import { startAssemblyAIFake } from "../fakes/voice-assemblyai.ts"
import { startCartesiaFake } from "../fakes/voice-cartesia.ts"
import { startDeepgramFake } from "../fakes/voice-deepgram.ts"
import { startElevenLabsFake } from "../fakes/voice-elevenlabs.ts"
import { startOpenAIVoiceFake } from "../fakes/voice-openai.ts"
import { startSpitchFake } from "../fakes/voice-spitch.ts"

export const MANAGED_KEY = "test-key"
export const BYOK_KEY = "byok-key"

export const startVoiceFakes = async () => {
  const keys = [MANAGED_KEY, BYOK_KEY]
  const [openai, deepgram, cartesia, elevenlabs, assemblyai, spitch] = await Promise.all([
    startOpenAIVoiceFake({ keys }),
    startDeepgramFake({ keys }),
    startCartesiaFake({ keys }),
    startElevenLabsFake({ keys }),
    startAssemblyAIFake({ keys }),
    startSpitchFake({ keys })
  ])
  const all = [openai, deepgram, cartesia, elevenlabs, assemblyai, spitch]
  return {
    openai,
    deepgram,
    cartesia,
    elevenlabs,
    assemblyai,
    spitch,
    /** Clears recorded requests and scripts between tests. */
    reset: () => {
      for (const fake of all) {
        fake.requests.length = 0
        fake.failure = undefined
        fake.delayMs = 0
        fake.audio.gate = undefined
        fake.audio.onHold = undefined
        fake.audio.chunks = 4
        fake.audio.chunkDelayMs = 20
      }
    },
    close: () => Promise.all(all.map((fake) => fake.close())).then(() => undefined)
  }
}

export type VoiceFakes = Awaited<ReturnType<typeof startVoiceFakes>>

/** Base URLs of every fake; managed keys only for the providers listed (default: all six). */
export const voiceEnv = (
  fakes: VoiceFakes,
  managed: ReadonlyArray<string> = ["openai", "deepgram", "cartesia", "elevenlabs", "assemblyai", "spitch"]
): Record<string, string> => {
  const env: Record<string, string> = {
    OPENAI_BASE_URL: fakes.openai.url,
    DEEPGRAM_BASE_URL: fakes.deepgram.url,
    CARTESIA_BASE_URL: fakes.cartesia.url,
    ELEVENLABS_BASE_URL: fakes.elevenlabs.url,
    ASSEMBLYAI_BASE_URL: fakes.assemblyai.url,
    SPITCH_BASE_URL: fakes.spitch.url,
    VOICE_POLL_INTERVAL_MS: "10",
    VOICE_PROVIDER_TIMEOUT_MS: "5000",
    // Feature tests make many calls per project; the default limit of 60 is tested on its own.
    VOICE_RATE_LIMIT_PER_MINUTE: "100000"
  }
  for (const provider of managed) env[`${provider.toUpperCase()}_API_KEY`] = MANAGED_KEY
  return env
}

/**
 * BYOK keys for tests: `set(projectId, provider)` gives the project a key (the fake accepts `BYOK_KEY`).
 * The layer overrides the `VoiceKeys` reference until provider connections are wired in.
 */
/**
 * Gives projects BYOK keys the way users do: real provider connections (through the ProviderConnections service
 * of the running gateway), removed again by `clear`.
 */
export const byokStore = () => {
  let gateway: Gateway | undefined
  const created: Array<{ readonly projectId: string; readonly id: string }> = []
  return {
    bind: (gw: Gateway) => {
      gateway = gw
    },
    set: async (projectId: string, provider: string, options: { readonly baseUrl?: string | null; readonly apiKey?: string } = {}) => {
      if (!gateway) throw new Error("byokStore: bind(gw) first")
      const connection = await gateway.run(Effect.flatMap(ProviderConnections, (c) =>
        c.create(projectId, { provider, api_key: options.apiKey ?? BYOK_KEY, base_url: options.baseUrl ?? null })))
      created.push({ projectId, id: connection.id })
    },
    clear: async () => {
      if (!gateway) return
      const gw = gateway
      for (const { id, projectId } of created.splice(0)) {
        await gw.run(Effect.flatMap(ProviderConnections, (c) => c.remove(projectId, id)).pipe(Effect.ignore))
      }
    }
  }
}

export interface AudioAnswer {
  readonly status: number
  readonly headers: Headers
  readonly bytes: Buffer
  readonly json: Record<string, unknown> | undefined
}

const answer = async (response: Response): Promise<AudioAnswer> => {
  const bytes = Buffer.from(await response.arrayBuffer())
  let json: Record<string, unknown> | undefined
  if ((response.headers.get("content-type") ?? "").includes("json")) {
    json = JSON.parse(bytes.toString("utf8")) as Record<string, unknown>
  }
  return { status: response.status, headers: response.headers, bytes, json }
}

export const speak = async (baseUrl: string, apiKey: string, body: unknown) =>
  answer(
    await fetch(`${baseUrl}/api/ai/audio/speech`, {
      method: "POST",
      headers: { SERVICE_API_KEY: apiKey, "content-type": "application/json" },
      body: typeof body === "string" ? body : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000)
    })
  )

export interface UploadFile {
  readonly bytes: Uint8Array
  readonly name: string
  readonly type: string
}

export const sampleAudio = (size = 2048, name = "clip.mp3", type = "audio/mpeg"): UploadFile => ({
  bytes: new Uint8Array(Buffer.alloc(size, 7)),
  name,
  type
})

export const transcribe = async (
  baseUrl: string,
  apiKey: string,
  fields: Record<string, string>,
  file: UploadFile | null = sampleAudio()
) => {
  const form = new FormData()
  if (file) form.append("file", new Blob([new Uint8Array(file.bytes)], { type: file.type }), file.name)
  for (const [key, value] of Object.entries(fields)) form.append(key, value)
  const response = await fetch(`${baseUrl}/api/ai/audio/transcriptions`, {
    method: "POST",
    headers: { SERVICE_API_KEY: apiKey },
    body: form
  })
  const text = await response.text()
  let json: Record<string, unknown> | undefined
  if ((response.headers.get("content-type") ?? "").includes("json")) json = JSON.parse(text) as Record<string, unknown>
  return { status: response.status, headers: response.headers, text, json }
}
