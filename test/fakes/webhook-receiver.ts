/**
 * A webhook receiver on 127.0.0.1 for tests: records every request (raw body, headers, time) and answers as
 * scripted — a status with headers and body, a delay, or no answer at all (`hang`).
 */
import * as Http from "node:http"

export interface ReceivedWebhook {
  readonly method: string
  readonly path: string
  readonly headers: Http.IncomingHttpHeaders
  /** The body exactly as received. */
  readonly body: string
  /** Epoch ms with sub-millisecond precision. */
  readonly receivedAt: number
}

export type Reply =
  | { readonly status: number; readonly headers?: Record<string, string>; readonly body?: string; readonly delayMs?: number }
  | { readonly hang: true }

export interface Receiver {
  readonly url: string
  readonly port: number
  readonly received: Array<ReceivedWebhook>
  /** Answers for the next requests, in order; afterwards `otherwise` answers. */
  readonly script: (...replies: ReadonlyArray<Reply>) => void
  /** The answer once the script is used up (default 200 `ok`). */
  otherwise: (request: ReceivedWebhook) => Reply
  /** Resolves when at least `count` requests arrived. */
  readonly waitFor: (count: number, timeoutMs?: number) => Promise<Array<ReceivedWebhook>>
  /** Received bodies parsed as JSON. */
  readonly payloads: () => Array<{ type: string; timestamp: string; api_version: string; data: { event_id: string } & Record<string, unknown> }>
  readonly close: () => Promise<void>
}

export const startReceiver = async (path = "/hook"): Promise<Receiver> => {
  const received: Array<ReceivedWebhook> = []
  const scripted: Array<Reply> = []
  const waiters: Array<() => void> = []
  const server = Http.createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const entry: ReceivedWebhook = {
        method: request.method ?? "",
        path: request.url ?? "",
        headers: request.headers,
        body: Buffer.concat(chunks).toString("utf8"),
        receivedAt: performance.timeOrigin + performance.now()
      }
      received.push(entry)
      for (const wake of waiters.splice(0)) wake()
      const reply = scripted.shift() ?? receiver.otherwise(entry)
      if ("hang" in reply) return
      const send = () => {
        response.writeHead(reply.status, reply.headers ?? {})
        response.end(reply.body ?? "")
      }
      if (reply.delayMs) setTimeout(send, reply.delayMs)
      else send()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("expected a TCP address")
  const port = address.port
  const receiver: Receiver = {
    url: `http://127.0.0.1:${port}${path}`,
    port,
    received,
    script: (...replies) => {
      scripted.push(...replies)
    },
    otherwise: () => ({ status: 200, body: "ok" }),
    waitFor: (count, timeoutMs = 10_000) =>
      new Promise((resolve, reject) => {
        const deadline = setTimeout(
          () => reject(new Error(`receiver got ${received.length} of ${count} requests in ${timeoutMs} ms`)),
          timeoutMs
        )
        const check = () => {
          if (received.length >= count) {
            clearTimeout(deadline)
            resolve(received)
          } else waiters.push(check)
        }
        check()
      }),
    payloads: () => received.map((entry) => JSON.parse(entry.body)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
  return receiver
}
