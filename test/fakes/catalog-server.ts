/** A tiny loopback HTTP server for the catalog fakes: request capture, delays, scripted failures. */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"

export interface CapturedRequest {
  readonly method: string
  readonly path: string
  readonly query: URLSearchParams
  readonly headers: Readonly<Record<string, string>>
  readonly body: unknown
}

export interface Scripted {
  /** Milliseconds to wait before answering (the wait ends early if the client goes away). */
  delayMs: number
  /** When set, every request answers this status and JSON body. */
  failWith: { readonly status: number; readonly body: unknown } | null
}

export type Route = (request: CapturedRequest) => { readonly status: number; readonly body: unknown }

export const startFakeServer = async (route: Route) => {
  const requests: Array<CapturedRequest> = []
  const script: Scripted = { delayMs: 0, failWith: null }
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Array<Buffer> = []
    for await (const chunk of req) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)))
    const text = Buffer.concat(chunks).toString("utf8")
    const url = new URL(req.url ?? "/", "http://fake")
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === "string") headers[name] = value
    }
    let body: unknown = undefined
    try {
      body = text.length > 0 ? JSON.parse(text) : undefined
    } catch {
      body = text
    }
    const captured = { method: req.method ?? "GET", path: url.pathname, query: url.searchParams, headers, body }
    requests.push(captured)
    if (script.delayMs > 0) {
      const waited = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(true), script.delayMs)
        res.once("close", () => {
          clearTimeout(timer)
          resolve(false)
        })
      })
      if (!waited) return
    }
    const answer = script.failWith ?? route(captured)
    res.writeHead(answer.status, { "content-type": "application/json", "x-request-id": `fake_${requests.length}` })
    res.end(JSON.stringify(answer.body))
  }
  const server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("expected a TCP address")
  const port = address.port
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    script,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
