/**
 * The plumbing shared by the voice fakes: a real HTTP server on 127.0.0.1 that records every request, answers
 * scripted failures, and sends audio in several delayed chunks (optionally holding the last one until released,
 * so a test can prove the gateway forwards audio before the upstream finishes).
 */
import * as Http from "node:http"
import type { AddressInfo } from "node:net"

export interface Captured {
  readonly method: string
  readonly path: string
  readonly query: URLSearchParams
  readonly headers: Http.IncomingHttpHeaders
  readonly body: Buffer
}

export interface ScriptedFailure {
  readonly status: number
  readonly body: unknown
  /** How many requests fail before answers are normal again (default: every request). */
  times?: number
}

export interface AudioScript {
  /** Number of chunks the audio is sent in. */
  chunks: number
  /** Pause before each chunk after the first. */
  chunkDelayMs: number
  /** When set, the last chunk waits for this promise (see `holdLastChunk`). */
  gate: Promise<void> | undefined
  /** Called when an answer reaches the held last chunk. */
  onHold: (() => void) | undefined
  /** Bytes of audio per request (split across chunks). */
  size: number
}

export interface FakeBase {
  readonly url: string
  readonly requests: Array<Captured>
  /** Keys the fake accepts; anything else is a 401 in the provider's error format. */
  readonly keys: Set<string>
  readonly audio: AudioScript
  failure: ScriptedFailure | undefined
  /** Delay before answering anything (timeouts). */
  delayMs: number
  /** Resolves once a streamed answer has sent everything but its held last chunk; call `release` to finish it. */
  holdLastChunk: () => { readonly release: () => void; readonly reachedHold: Promise<void> }
  /** Set while a response is still being written. */
  readonly inFlight: () => number
  readonly close: () => Promise<void>
}

export type Route = (request: Captured, response: Http.ServerResponse, fake: FakeBase) => Promise<unknown> | unknown

export const readBody = (request: Http.IncomingMessage) =>
  new Promise<Buffer>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => resolve(Buffer.concat(chunks)))
    request.on("error", reject)
  })

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export const sendJson = (response: Http.ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body)
  response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
  response.end(text)
}

/** Deterministic fake audio: a label (provider, format, text) repeated up to `size` bytes. */
export const fakeAudio = (label: string, size: number) => {
  const unit = Buffer.from(`${label};`)
  const out = Buffer.alloc(Math.max(size, unit.length))
  for (let offset = 0; offset < out.length; offset += unit.length) unit.copy(out, offset)
  return out
}

/** Parses a multipart body the way a real provider would (undici's FormData parser). */
export const parseForm = async (captured: Captured) => {
  const request = new Request("http://fake/", {
    method: "POST",
    headers: { "content-type": String(captured.headers["content-type"] ?? "") },
    body: new Uint8Array(captured.body)
  })
  return request.formData()
}

export const startFake = async (
  route: Route,
  options: { readonly keys?: ReadonlyArray<string> } = {}
): Promise<FakeBase> => {
  let active = 0
  const server = Http.createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  const { port } = server.address() as AddressInfo
  const fake: FakeBase = {
    url: `http://127.0.0.1:${port}`,
    requests: [],
    keys: new Set(options.keys ?? ["test-key"]),
    audio: { chunks: 4, chunkDelayMs: 20, gate: undefined, onHold: undefined, size: 4096 },
    failure: undefined,
    delayMs: 0,
    holdLastChunk: () => {
      let release = () => {}
      let reached = () => {}
      const gate = new Promise<void>((resolve) => (release = resolve))
      const reachedHold = new Promise<void>((resolve) => (reached = resolve))
      fake.audio.gate = gate
      fake.audio.onHold = reached
      return { release, reachedHold }
    },
    inFlight: () => active,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
  server.on("request", (request: Http.IncomingMessage, response: Http.ServerResponse) => {
    active += 1
    response.on("close", () => (active -= 1))
    void (async () => {
      const body = await readBody(request)
      const url = new URL(request.url ?? "/", "http://fake")
      const captured: Captured = {
        method: request.method ?? "GET",
        path: url.pathname,
        query: url.searchParams,
        headers: request.headers,
        body
      }
      fake.requests.push(captured)
      if (fake.delayMs > 0) await sleep(fake.delayMs)
      const failure = fake.failure
      if (failure) {
        if (failure.times !== undefined) {
          failure.times -= 1
          if (failure.times <= 0) fake.failure = undefined
        }
        return typeof failure.body === "string"
          ? (response.writeHead(failure.status, { "content-type": "text/plain" }), response.end(failure.body))
          : sendJson(response, failure.status, failure.body)
      }
      await route(captured, response, fake)
    })().catch((error: unknown) => {
      if (!response.headersSent) sendJson(response, 500, { error: String(error) })
      else response.destroy()
    })
  })
  return fake
}

/** Streams `audio` in the scripted number of chunks with delays, holding the last chunk on the gate if set. */
export const sendAudio = async (fake: FakeBase, response: Http.ServerResponse, contentType: string, audio: Buffer) => {
  response.writeHead(200, { "content-type": contentType, "transfer-encoding": "chunked" })
  const { chunks, chunkDelayMs, gate, onHold } = fake.audio
  const size = Math.ceil(audio.length / chunks)
  for (let i = 0; i < chunks; i++) {
    const last = i === chunks - 1
    if (i > 0) await sleep(chunkDelayMs)
    if (last && gate) {
      onHold?.()
      await gate
    }
    response.write(audio.subarray(i * size, Math.min(audio.length, (i + 1) * size)))
  }
  response.end()
}
