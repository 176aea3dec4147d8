import * as Http from "node:http"
import { parseSync } from "subtitle"
import webvtt from "webvtt-parser"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { type Gateway, startGateway } from "../harness.ts"
import { parseForm } from "../fakes/voice-server.ts"
import { sampleAudio, startVoiceFakes, transcribe, type VoiceFakes, voiceEnv } from "./setup.ts"

let fakes: VoiceFakes
let gw: Gateway

beforeAll(async () => {
  fakes = await startVoiceFakes()
  gw = await startGateway({ env: voiceEnv(fakes) })
})
afterAll(async () => {
  await gw?.close()
  await fakes?.close()
})
beforeEach(() => fakes.reset())

const MAX = 25 * 1024 * 1024

const srtCues = (text: string) =>
  parseSync(text).flatMap((node) => (node.type === "cue" ? [node.data] : []))

const strictVtt = (text: string) => {
  const parsed = new webvtt.WebVTTParser().parse(text, "metadata")
  expect(parsed.errors).toEqual([])
  return parsed.cues
}

describe("speech-to-text: the general-purpose provider (whisper-1)", () => {
  it("defaults to whisper-1 and json: {text} with X-Provider and X-Request-Id", async () => {
    const res = await transcribe(gw.baseUrl, gw.project.apiKey, {})
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toContain("application/json")
    expect(res.json).toEqual({ text: "Hello there. How are you today?" })
    expect(res.headers.get("x-provider")).toBe("openai")
    expect(res.headers.get("x-request-id")).toMatch(/^req_/)
    const upstream = fakes.openai.requests[0]
    expect(upstream?.path).toBe("/audio/transcriptions")
    expect(upstream?.headers.authorization).toBe("Bearer test-key")
    if (!upstream) return
    const form = await parseForm(upstream)
    expect(form.get("model")).toBe("whisper-1")
    expect(form.get("response_format")).toBe("verbose_json")
    expect(form.getAll("timestamp_granularities[]")).toEqual(["word", "segment"])
    const file = form.get("file")
    expect(file instanceof File && file.name).toBe("clip.mp3")
    expect(file instanceof File && file.size).toBe(2048)
  })

  it("text is plain text", async () => {
    const res = await transcribe(gw.baseUrl, gw.project.apiKey, { response_format: "text" })
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toMatch(/^text\/plain/)
    expect(res.text).toBe("Hello there. How are you today?")
  })

  it("verbose_json has text, language, duration, provider, model, segments and words", async () => {
    const res = await transcribe(gw.baseUrl, gw.project.apiKey, { response_format: "verbose_json" })
    expect(res.status).toBe(200)
    expect(res.json).toEqual({
      text: "Hello there. How are you today?",
      language: "english",
      duration: 9.5,
      provider: "openai",
      model: "whisper-1",
      segments: [
        { id: 0, start: 0, end: 4.2, text: "Hello there." },
        { id: 1, start: 4.2, end: 9.5, text: "How are you today?" }
      ],
      words: [
        { word: "Hello", start: 0, end: 0.6 },
        { word: "there", start: 0.6, end: 1.2 },
        { word: "How", start: 4.2, end: 4.6 },
        { word: "are", start: 4.6, end: 4.9 },
        { word: "you", start: 4.9, end: 5.2 },
        { word: "today", start: 5.2, end: 6 }
      ]
    })
  })

  it("srt is SubRip (application/x-subrip) built from the segment timings, and parses", async () => {
    const res = await transcribe(gw.baseUrl, gw.project.apiKey, { response_format: "srt" })
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toBe("application/x-subrip")
    expect(srtCues(res.text)).toEqual([
      { start: 0, end: 4200, text: "Hello there." },
      { start: 4200, end: 9500, text: "How are you today?" }
    ])
    expect(res.text.startsWith("1\n00:00:00,000 --> 00:00:04,200\nHello there.\n")).toBe(true)
  })

  it("vtt is WebVTT (text/vtt) that a strict parser accepts without errors", async () => {
    const res = await transcribe(gw.baseUrl, gw.project.apiKey, { response_format: "vtt" })
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toMatch(/^text\/vtt/)
    const cues = strictVtt(res.text)
    expect(cues.map((c) => [c.startTime, c.endTime, c.text])).toEqual([
      [0, 4.2, "Hello there."],
      [4.2, 9.5, "How are you today?"]
    ])
    expect(srtCues(res.text)).toHaveLength(2)
  })

  it("prompt, language and temperature reach the general-purpose provider; temperature may be 0 to 1", async () => {
    for (const temperature of ["0", "1"]) {
      const res = await transcribe(gw.baseUrl, gw.project.apiKey, { prompt: "Names: Ada", language: "en", temperature })
      expect(res.status).toBe(200)
    }
    const upstream = fakes.openai.requests[fakes.openai.requests.length - 1]
    if (!upstream) throw new Error("no upstream call")
    const form = await parseForm(upstream)
    expect(form.get("prompt")).toBe("Names: Ada")
    expect(form.get("language")).toBe("en")
    expect(form.get("temperature")).toBe("1")
  })

  it("temperature outside 0 to 1 is a 400 bad_request", async () => {
    for (const temperature of ["-0.01", "1.01", "warm"]) {
      const res = await transcribe(gw.baseUrl, gw.project.apiKey, { temperature })
      expect(res.status).toBe(400)
      expect(res.json).toMatchObject({ error: "bad_request", param: "temperature" })
    }
    expect(fakes.openai.requests).toHaveLength(0)
  })

  it("SRT and VTT timings survive segments longer than an hour", async () => {
    fakes.openai.transcription = {
      ...fakes.openai.transcription,
      duration: 3725.5,
      segments: [{ id: 0, start: 3723.004, end: 3725.5, text: " Late words" }]
    }
    try {
      const srt = await transcribe(gw.baseUrl, gw.project.apiKey, { response_format: "srt" })
      expect(srt.text).toContain("01:02:03,004 --> 01:02:05,500")
      expect(srtCues(srt.text)).toEqual([{ start: 3723004, end: 3725500, text: "Late words" }])
      const vtt = await transcribe(gw.baseUrl, gw.project.apiKey, { response_format: "vtt" })
      expect(strictVtt(vtt.text)[0]?.startTime).toBeCloseTo(3723.004, 3)
    } finally {
      fakes.openai.transcription = (await import("../fakes/voice-openai.ts")).defaultOpenAITranscription()
    }
  })
})

describe("speech-to-text: diarization providers", () => {
  it("nova-3 sends the raw audio to Deepgram /v1/listen and returns integer speakers in verbose_json", async () => {
    const res = await transcribe(gw.baseUrl, gw.project.apiKey, { model: "nova-3", diarize: "true", response_format: "verbose_json" })
    expect(res.status).toBe(200)
    expect(res.headers.get("x-provider")).toBe("deepgram")
    const upstream = fakes.deepgram.requests[0]
    expect(upstream?.path).toBe("/v1/listen")
    expect(upstream?.query.get("model")).toBe("nova-3")
    expect(upstream?.query.get("diarize")).toBe("true")
    expect(upstream?.headers["content-type"]).toBe("audio/mpeg")
    expect(upstream?.body.length).toBe(2048)
    expect(res.json).toMatchObject({
      text: "Hi there. Hello back.",
      duration: 2.5,
      provider: "deepgram",
      model: "nova-3",
      segments: [
        { id: 0, start: 0.1, end: 0.9, text: "Hi there.", speaker: 0 },
        { id: 1, start: 1.5, end: 2.4, text: "Hello back.", speaker: 1 }
      ],
      words: [
        { word: "Hi", start: 0.1, end: 0.4, speaker: 0 },
        { word: "there.", start: 0.4, end: 0.9, speaker: 0 },
        { word: "Hello", start: 1.5, end: 1.9, speaker: 1 },
        { word: "back.", start: 1.9, end: 2.4, speaker: 1 }
      ]
    })
  })

  it("without diarize there are no speaker labels", async () => {
    const res = await transcribe(gw.baseUrl, gw.project.apiKey, { model: "nova-3", response_format: "verbose_json" })
    expect(fakes.deepgram.requests[0]?.query.get("diarize")).toBe("false")
    const words = (res.json?.words ?? []) as Array<Record<string, unknown>>
    expect(words.every((w) => !("speaker" in w))).toBe(true)
  })

  it("diarized VTT carries voice spans and diarized SRT names the speaker", async () => {
    const vtt = await transcribe(gw.baseUrl, gw.project.apiKey, { model: "nova-3", diarize: "true", response_format: "vtt" })
    const cues = strictVtt(vtt.text)
    expect(cues.map((c) => c.tree.children[0]?.value)).toEqual(["Speaker 0", "Speaker 1"])
    const srt = await transcribe(gw.baseUrl, gw.project.apiKey, { model: "nova-3", diarize: "true", response_format: "srt" })
    expect(srtCues(srt.text).map((c) => c.text)).toEqual(["[Speaker 0] Hi there.", "[Speaker 1] Hello back."])
  })

  it("transcribe-universal uploads to AssemblyAI, creates a transcript, polls until completed, and returns speakers A and B in seconds", async () => {
    fakes.assemblyai.pollsUntilDone = 3
    const res = await transcribe(gw.baseUrl, gw.project.apiKey, {
      model: "transcribe-universal",
      diarize: "true",
      language: "en",
      response_format: "verbose_json"
    })
    expect(res.status).toBe(200)
    expect(res.headers.get("x-provider")).toBe("assemblyai")
    const paths = fakes.assemblyai.requests.map((r) => `${r.method} ${r.path.replace(/[0-9a-f-]{36}/, ":id")}`)
    expect(paths).toEqual([
      "POST /v2/upload",
      "POST /v2/transcript",
      "GET /v2/transcript/:id",
      "GET /v2/transcript/:id",
      "GET /v2/transcript/:id",
      "GET /v2/transcript/:id"
    ])
    expect(fakes.assemblyai.requests[0]?.headers.authorization).toBe("test-key")
    expect(fakes.assemblyai.requests[0]?.body.length).toBe(2048)
    expect(JSON.parse(fakes.assemblyai.requests[1]?.body.toString() ?? "{}")).toMatchObject({
      speech_models: ["universal-2"],
      speaker_labels: true,
      language_code: "en"
    })
    expect(res.json).toMatchObject({
      text: "Good morning. Morning to you.",
      duration: 3,
      provider: "assemblyai",
      model: "transcribe-universal",
      segments: [
        { id: 0, start: 0.1, end: 0.9, text: "Good morning.", speaker: "A" },
        { id: 1, start: 1.5, end: 2.4, text: "Morning to you.", speaker: "B" }
      ]
    })
    expect((res.json?.words as Array<unknown>)[2]).toEqual({ word: "Morning", start: 1.5, end: 1.9, speaker: "B" })
  })

  it("an AssemblyAI transcript ending in error is a 400 provider_error with its message", async () => {
    fakes.assemblyai.transcriptError = "Audio file could not be decoded"
    try {
      const res = await transcribe(gw.baseUrl, gw.project.apiKey, { model: "transcribe-universal" })
      expect(res.status).toBe(400)
      expect(res.json).toMatchObject({ error: "provider_error", provider: "assemblyai" })
      expect(String(res.json?.message)).toContain("could not be decoded")
    } finally {
      fakes.assemblyai.transcriptError = undefined
    }
  })

  it("AssemblyAI polling is bounded by the provider timeout (502 provider_error)", async () => {
    fakes.assemblyai.pollsUntilDone = 100_000
    const started = Date.now()
    const res = await transcribe(gw.baseUrl, gw.project.apiKey, { model: "transcribe-universal" })
    expect(res.status).toBe(502)
    expect(String(res.json?.message)).toContain("no answer within")
    expect(Date.now() - started).toBeLessThan(8000)
    fakes.assemblyai.pollsUntilDone = 2
  })

  it("diarize on a model without diarization is a 400 bad_request", async () => {
    const res = await transcribe(gw.baseUrl, gw.project.apiKey, { model: "whisper-1", diarize: "true" })
    expect(res.status).toBe(400)
    expect(res.json).toMatchObject({ error: "bad_request", param: "diarize" })
  })
})

describe("speech-to-text: the regional provider", () => {
  it("regional-stt sends the file as content with the target language and renders its sentence timings", async () => {
    const res = await transcribe(gw.baseUrl, gw.project.apiKey, { model: "regional-stt", language: "yo", response_format: "srt" })
    expect(res.status).toBe(200)
    expect(res.headers.get("x-provider")).toBe("spitch")
    const upstream = fakes.spitch.requests[0]
    if (!upstream) throw new Error("no upstream call")
    const form = await parseForm(upstream)
    expect(form.get("language")).toBe("yo")
    expect(form.get("content")).toBeInstanceOf(File)
    expect(srtCues(res.text)).toEqual([
      { start: 0, end: 1800, text: "Ẹ kú àárọ̀." },
      { start: 1800, end: 3600, text: "Báwo ni?" }
    ])
  })

  it("reports no duration (Spitch gives none) and rejects languages outside en, yo, ha, ig, am", async () => {
    const res = await transcribe(gw.baseUrl, gw.project.apiKey, { model: "regional-stt", response_format: "verbose_json" })
    expect(res.json).toMatchObject({ duration: null, language: "en", provider: "spitch" })
    const bad = await transcribe(gw.baseUrl, gw.project.apiKey, { model: "regional-stt", language: "fr" })
    expect(bad.status).toBe(400)
    expect(bad.json).toMatchObject({ error: "bad_request", param: "language" })
  })

  it("prompt and temperature are general-purpose only: not sent to other providers", async () => {
    const res = await transcribe(gw.baseUrl, gw.project.apiKey, { model: "regional-stt", prompt: "hint", temperature: "0.5" })
    expect(res.status).toBe(200)
    const form = await parseForm(fakes.spitch.requests[0] ?? { method: "", path: "", query: new URLSearchParams(), headers: {}, body: Buffer.alloc(0) })
    expect(form.get("prompt")).toBeNull()
    expect(form.get("temperature")).toBeNull()
  })
})

describe("speech-to-text: request rules", () => {
  it("provider forces the provider and must match the model", async () => {
    const mismatch = await transcribe(gw.baseUrl, gw.project.apiKey, { model: "whisper-1", provider: "deepgram" })
    expect(mismatch.status).toBe(400)
    expect(mismatch.json).toMatchObject({ error: "bad_request", param: "provider" })
    const forced = await transcribe(gw.baseUrl, gw.project.apiKey, { provider: "deepgram" })
    expect(forced.status).toBe(200)
    expect(forced.headers.get("x-provider")).toBe("deepgram")
    const matching = await transcribe(gw.baseUrl, gw.project.apiKey, { provider: "assemblyai", model: "transcribe-universal" })
    expect(matching.headers.get("x-provider")).toBe("assemblyai")
  })

  it("an unknown model or response_format is a 400 bad_request", async () => {
    expect((await transcribe(gw.baseUrl, gw.project.apiKey, { model: "whisper-9" })).json).toMatchObject({ error: "bad_request", param: "model" })
    expect((await transcribe(gw.baseUrl, gw.project.apiKey, { response_format: "docx" })).json).toMatchObject({
      error: "bad_request",
      param: "response_format"
    })
  })

  it("a missing or empty file is a 400 bad_request", async () => {
    const missing = await transcribe(gw.baseUrl, gw.project.apiKey, { model: "whisper-1" }, null)
    expect(missing.status).toBe(400)
    expect(missing.json).toMatchObject({ error: "bad_request", param: "file" })
    const empty = await transcribe(gw.baseUrl, gw.project.apiKey, {}, sampleAudio(0))
    expect(empty.json).toMatchObject({ error: "bad_request", param: "file" })
    const json = await fetch(`${gw.baseUrl}/api/ai/audio/transcriptions`, {
      method: "POST",
      headers: { SERVICE_API_KEY: gw.project.apiKey, "content-type": "application/json" },
      body: "{}"
    })
    expect(json.status).toBe(400)
    expect(await json.json()).toMatchObject({ error: "bad_request", param: "file" })
  })

  it.each([
    ["browser webm/opus without an extension", "blob", "audio/webm;codecs=opus", "webm"],
    ["browser mp4 audio", "recording", "audio/mp4", "mp4"],
    ["m4a by extension behind a generic MIME type", "memo.m4a", "application/octet-stream", "m4a"],
    ["ogg", "a.ogg", "audio/ogg", "ogg"],
    ["flac", "a.flac", "audio/x-flac", "flac"],
    ["wav", "a.wav", "audio/wave", "wav"],
    ["mp3 by extension with no MIME type", "song.MP3", "", "mp3"]
  ])("accepts %s", async (_name, fileName, type, extension) => {
    const res = await transcribe(gw.baseUrl, gw.project.apiKey, {}, { bytes: new Uint8Array(64), name: fileName, type })
    expect(res.status).toBe(200)
    const upstream = fakes.openai.requests[0]
    if (!upstream) throw new Error("no upstream call")
    const file = (await parseForm(upstream)).get("file")
    expect(file instanceof File && file.name.toLowerCase().endsWith(`.${extension}`)).toBe(true)
  })

  it("rejects a file that is neither an accepted MIME type nor an accepted extension", async () => {
    const res = await transcribe(gw.baseUrl, gw.project.apiKey, {}, { bytes: new Uint8Array(64), name: "notes.txt", type: "text/plain" })
    expect(res.status).toBe(400)
    expect(res.json).toMatchObject({ error: "bad_request", param: "file" })
  })

  it("a file of exactly 25 MB is accepted; one byte more is a 400 bad_request", async () => {
    const exact = await transcribe(gw.baseUrl, gw.project.apiKey, {}, sampleAudio(MAX))
    expect(exact.status).toBe(200)
    expect((await parseForm(fakes.openai.requests[0] ?? { method: "", path: "", query: new URLSearchParams(), headers: {}, body: Buffer.alloc(0) })).get("file")).toHaveProperty("size", MAX)
    const over = await transcribe(gw.baseUrl, gw.project.apiKey, {}, sampleAudio(MAX + 1))
    expect(over.status).toBe(400)
    expect(over.json).toMatchObject({ error: "bad_request", param: "file" })
    expect(fakes.openai.requests).toHaveLength(1)
  })

  it("an oversized upload is rejected while it streams in, before the client finishes sending", async () => {
    const boundary = "----voiceboundary"
    const chunk = Buffer.alloc(1024 * 1024, 1)
    const planned = 64 // MB the client would send
    const result = await new Promise<{ status: number; body: string; sentMb: number }>((resolve, reject) => {
      let sentMb = 0
      let answered = false
      const request = Http.request(`${gw.baseUrl}/api/ai/audio/transcriptions`, {
        method: "POST",
        headers: { SERVICE_API_KEY: gw.project.apiKey, "content-type": `multipart/form-data; boundary=${boundary}` }
      }, (response) => {
        answered = true
        let body = ""
        response.on("data", (d: Buffer) => (body += d.toString()))
        response.on("end", () => {
          resolve({ status: response.statusCode ?? 0, body, sentMb })
          request.destroy()
        })
      })
      request.on("error", (error) => (answered ? undefined : reject(error)))
      request.write(`--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="big.wav"\r\ncontent-type: audio/wav\r\n\r\n`)
      const pump = () => {
        if (answered) return
        if (sentMb >= planned) return request.end(`\r\n--${boundary}--\r\n`)
        sentMb += 1
        if (request.write(chunk)) setImmediate(pump)
        else request.once("drain", pump)
      }
      pump()
    })
    expect(result.status).toBe(400)
    expect(JSON.parse(result.body)).toMatchObject({ error: "bad_request", param: "file" })
    expect(result.sentMb).toBeLessThan(planned)
    expect(fakes.openai.requests).toHaveLength(0)
  })

  it("an upstream failure is a 502 provider_error and still carries X-Request-Id", async () => {
    fakes.openai.failure = { status: 500, body: { error: { message: "server error", type: "server_error", param: null, code: null } } }
    const res = await transcribe(gw.baseUrl, gw.project.apiKey, {})
    expect(res.status).toBe(502)
    expect(res.json).toMatchObject({ error: "provider_error", provider: "openai", upstream_status: 500 })
    expect(res.json?.request_id).toBe(res.headers.get("x-request-id"))
  })
})
