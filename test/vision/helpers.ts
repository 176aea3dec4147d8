/** Shared setup of the vision end-to-end tests: the gateway, the three fake upstreams and a local image server. */
import { createParser, type EventSourceMessage } from "eventsource-parser"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { startAnthropicFake } from "../fakes/anthropic.ts"
import { startGoogleFake } from "../fakes/google.ts"
import { startOpenAIFake } from "../fakes/openai.ts"
import type { CapturedRequest, FakeUpstream } from "../fakes/upstream.ts"
import { type Gateway, startGateway } from "../harness.ts"
import { bearer, call, serviceKey } from "../http.ts"

export interface VisionWorld {
  readonly gw: Gateway
  readonly openai: FakeUpstream
  readonly anthropic: FakeUpstream
  readonly google: FakeUpstream
  readonly images: ImageServer
  readonly close: () => Promise<void>
}

export interface ImageServer {
  readonly origin: string
  /** Serves `body` at `path` (with `contentType`). */
  readonly put: (path: string, body: Uint8Array, contentType?: string) => void
  /** Serves a streamed body of `size` bytes starting with `head`, without Content-Length. */
  readonly putStream: (path: string, head: Uint8Array, size: number) => void
  /** Paths requested so far. */
  readonly requested: Array<string>
  readonly close: () => Promise<void>
}

export const startImageServer = async (): Promise<ImageServer> => {
  const bodies = new Map<string, { body: Uint8Array; contentType: string }>()
  const streams = new Map<string, { head: Uint8Array; size: number }>()
  const requested: Array<string> = []
  const server = Http.createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://local").pathname
    requested.push(path)
    const redirect = /^\/redirect(\/.*)$/.exec(path)
    if (redirect) {
      res.writeHead(302, { location: redirect[1]! })
      return res.end()
    }
    const found = bodies.get(path)
    if (found) {
      res.writeHead(200, { "content-type": found.contentType, "content-length": found.body.length })
      return res.end(found.body)
    }
    const streamed = streams.get(path)
    if (streamed) {
      res.writeHead(200, { "content-type": "image/png" })
      res.write(streamed.head)
      let sent = streamed.head.length
      const chunk = Buffer.alloc(1024 * 1024)
      const pump = () => {
        while (sent < streamed.size && !res.destroyed) {
          const piece = chunk.subarray(0, Math.min(chunk.length, streamed.size - sent))
          sent += piece.length
          if (!res.write(piece)) return void res.once("drain", pump)
        }
        res.end()
      }
      return pump()
    }
    res.writeHead(404)
    res.end()
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    put: (path, body, contentType = "application/octet-stream") => void bodies.set(path, { body, contentType }),
    putStream: (path, head, size) => void streams.set(path, { head, size }),
    requested,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

export const startVisionWorld = async (): Promise<VisionWorld> => {
  const openai = await startOpenAIFake({ apiKey: "sk-managed" })
  const anthropic = await startAnthropicFake({ apiKey: "ak-managed" })
  const google = await startGoogleFake({ apiKey: "gk-managed" })
  const images = await startImageServer()
  const gw = await startGateway({
    env: {
      OPENAI_BASE_URL: openai.baseUrl,
      OPENAI_API_KEY: "sk-managed",
      ANTHROPIC_BASE_URL: anthropic.baseUrl,
      ANTHROPIC_API_KEY: "ak-managed",
      GOOGLE_BASE_URL: google.baseUrl,
      GOOGLE_API_KEY: "gk-managed",
      SAFE_FETCH_ALLOW_LOOPBACK: "true",
      UPSTREAM_RETRY_BASE_MS: "20",
      UPSTREAM_TIMEOUT_MS: "5000"
    }
  })
  return {
    gw,
    openai,
    anthropic,
    google,
    images,
    close: async () => {
      await gw.close()
      await Promise.all([openai.close(), anthropic.close(), google.close(), images.close()])
    }
  }
}

export const visionCall = (gw: Gateway, path: string, body: unknown, key = gw.project.apiKey) =>
  call(gw.baseUrl, "POST", path, { headers: serviceKey(key), json: body })

/** A multipart call; `files` are `[field, name, type, bytes]`. */
export const multipartCall = async (
  gw: Gateway,
  path: string,
  files: ReadonlyArray<readonly [string, string, string, Uint8Array]>,
  fields: Record<string, string> = {}
) => {
  const form = new FormData()
  for (const [field, name, type, bytes] of files) form.append(field, new Blob([new Uint8Array(bytes)], { type }), name)
  for (const [key, value] of Object.entries(fields)) form.append(key, value)
  const response = await fetch(`${gw.baseUrl}${path}`, { method: "POST", headers: serviceKey(gw.project.apiKey), body: form })
  const text = await response.text()
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    body = undefined
  }
  return { status: response.status, headers: response.headers, body, text }
}

/** Reads an SSE response, noting when each message arrived. */
export const readSse = async (response: Response) => {
  const messages: Array<{ data: string; at: number }> = []
  const parser = createParser({ onEvent: (event: EventSourceMessage) => messages.push({ data: event.data, at: Date.now() }) })
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    parser.feed(decoder.decode(value, { stream: true }))
  }
  return messages
}

export const usageRows = async (gw: Gateway, secretKey = gw.project.secretKey) => {
  const res = await call(gw.baseUrl, "GET", "/v1/usage?limit=100", { headers: bearer(secretKey) })
  return (res.body as { data: Array<Record<string, any>> }).data
}

const record = (value: unknown): Record<string, any> =>
  typeof value === "object" && value !== null ? (value as Record<string, any>) : {}

/** The images a captured chat call carried, as `{mime, data}` in the provider's own field names. */
export const sentImages = (request: CapturedRequest | undefined): Array<{ mime: string; data: string }> => {
  const body = record(request?.body)
  if (Array.isArray(body.contents)) {
    return body.contents.flatMap((content: any) =>
      (content.parts ?? []).flatMap((part: any) => {
        const inline = part.inlineData ?? part.inline_data
        return inline ? [{ mime: inline.mimeType ?? inline.mime_type, data: inline.data }] : []
      })
    )
  }
  return (body.messages ?? []).flatMap((message: any) =>
    Array.isArray(message.content)
      ? message.content.flatMap((part: any) => {
        if (part.type === "image_url") {
          const url: string = part.image_url.url
          const match = /^data:([^;]+);base64,(.*)$/.exec(url)
          return [match ? { mime: match[1]!, data: match[2]! } : { mime: "url", data: url }]
        }
        if (part.type === "image") return [{ mime: part.source.media_type, data: part.source.data }]
        return []
      })
      : []
  )
}

/** The text a captured chat call carried in its user message. */
export const sentText = (request: CapturedRequest | undefined): string => {
  const body = record(request?.body)
  if (Array.isArray(body.contents)) {
    return body.contents.flatMap((c: any) => (c.parts ?? []).map((p: any) => p.text ?? "")).join("")
  }
  return (body.messages ?? []).flatMap((m: any) =>
    typeof m.content === "string" ? [m.content] : (m.content ?? []).map((p: any) => p.text ?? "")
  ).join("")
}
