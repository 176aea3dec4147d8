/**
 * Gateway overhead benchmark: `npm run bench:gateway` (not part of the test suite).
 *
 * A fake OpenAI upstream on loopback answers after a fixed latency. The same requests go directly to it, through
 * this gateway (a child process, as `npm start` runs it) and through the open-source Portkey gateway
 * (`@portkey-ai/gateway`), sequentially and at a fixed rate, non-streaming and streaming. Reports added latency
 * p50/p99, added time-to-first-token, throughput and the gateway's RSS, as Markdown on stdout.
 *
 * Options (environment): BENCH_RPS (1000), BENCH_SECONDS (10), BENCH_SEQUENTIAL (500), BENCH_UPSTREAM_MS (20),
 * BENCH_DATABASE_URL (PostgreSQL instead of the embedded database).
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { Agent, request } from "undici"

const RPS = Number(process.env.BENCH_RPS ?? 1000)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL ?? 500)
const UPSTREAM_MS = Number(process.env.BENCH_UPSTREAM_MS ?? 20)
const root = Path.resolve(import.meta.dirname, "..", "..")

// ---------------------------------------------------------------------------------------------------------------
// The upstream: OpenAI's wire format, fixed latency, minimal work.
// ---------------------------------------------------------------------------------------------------------------
const completion = JSON.stringify({
  id: "chatcmpl-bench",
  object: "chat.completion",
  created: 1,
  model: "gpt-4o-mini",
  choices: [{ index: 0, message: { role: "assistant", content: "Hello from the bench upstream." }, finish_reason: "stop" }],
  usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 }
})
const chunk = (content: string) =>
  `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "gpt-4o-mini", choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`
const streamTail = `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "gpt-4o-mini", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\n` +
  `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "gpt-4o-mini", choices: [], usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 } })}\n\ndata: [DONE]\n\n`

const startUpstream = () =>
  new Promise<{ url: string; close: () => void }>((resolve) => {
    const server = Http.createServer((req, res) => {
      let body = ""
      req.on("data", (c: Buffer) => (body += c.toString()))
      req.on("end", () => {
        const streaming = body.includes("\"stream\":true")
        setTimeout(() => {
          if (!streaming) {
            res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(completion) })
            res.end(completion)
            return
          }
          res.writeHead(200, { "content-type": "text/event-stream" })
          res.write(chunk("Hello "))
          setTimeout(() => {
            res.write(chunk("world"))
            res.end(streamTail)
          }, 5)
        }, UPSTREAM_MS)
      })
    })
    server.keepAliveTimeout = 60_000
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resolve({ url: `http://127.0.0.1:${port}`, close: () => server.close() })
    })
  })

// ---------------------------------------------------------------------------------------------------------------
// Processes
// ---------------------------------------------------------------------------------------------------------------
const waitForOutput = (child: ChildProcess, pattern: RegExp, timeoutMs = 60_000) =>
  new Promise<RegExpMatchArray>((resolve, reject) => {
    let output = ""
    const timer = setTimeout(() => reject(new Error(`timeout waiting for ${pattern}:\n${output}`)), timeoutMs)
    const onData = (data: Buffer) => {
      output += data.toString()
      const match = output.match(pattern)
      if (match) {
        clearTimeout(timer)
        resolve(match)
      }
    }
    child.stdout?.on("data", onData)
    child.stderr?.on("data", onData)
  })

const rssOf = (pid: number) => {
  try {
    const status = Fs.readFileSync(`/proc/${pid}/status`, "utf8")
    return Number(status.match(/VmRSS:\s+(\d+)/)?.[1] ?? 0) / 1024
  } catch {
    return 0
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Load
// ---------------------------------------------------------------------------------------------------------------
interface Target {
  readonly name: string
  readonly url: string
  readonly headers: Record<string, string>
}

const agent = new Agent({ keepAliveTimeout: 60_000, connections: 512, pipelining: 1 })
const bodyOf = (stream: boolean) =>
  JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Say hello" }], stream, max_tokens: 32 })

/** One call; returns total latency and time to the first body byte (ms), or null on failure. */
const once = async (target: Target, stream: boolean) => {
  const started = performance.now()
  try {
    const response = await request(target.url, {
      method: "POST",
      headers: { "content-type": "application/json", ...target.headers },
      body: bodyOf(stream),
      dispatcher: agent
    })
    let first = 0
    for await (const part of response.body) {
      if (first === 0 && (part as Buffer).length > 0) first = performance.now() - started
    }
    if (response.statusCode !== 200) return null
    return { total: performance.now() - started, ttfb: first }
  } catch {
    return null
  }
}

const percentile = (values: ReadonlyArray<number>, p: number) => {
  if (values.length === 0) return NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

interface Run {
  readonly p50: number
  readonly p99: number
  readonly ttfb50: number
  readonly ttfb99: number
  readonly ok: number
  readonly failed: number
  readonly throughput: number
}

const summarize = (samples: ReadonlyArray<{ total: number; ttfb: number } | null>, seconds: number): Run => {
  const ok = samples.filter((s): s is { total: number; ttfb: number } => s !== null)
  return {
    p50: percentile(ok.map((s) => s.total), 50),
    p99: percentile(ok.map((s) => s.total), 99),
    ttfb50: percentile(ok.map((s) => s.ttfb), 50),
    ttfb99: percentile(ok.map((s) => s.ttfb), 99),
    ok: ok.length,
    failed: samples.length - ok.length,
    throughput: ok.length / seconds
  }
}

const sequential = async (target: Target, stream: boolean) => {
  for (let i = 0; i < 50; i++) await once(target, stream) // warm-up
  const started = performance.now()
  const samples = []
  for (let i = 0; i < SEQUENTIAL; i++) samples.push(await once(target, stream))
  return summarize(samples, (performance.now() - started) / 1000)
}

/** Open-loop load: starts requests at a fixed rate regardless of answers (no coordinated omission). */
const fixedRate = async (target: Target, stream: boolean, rps: number, seconds: number) => {
  const total = rps * seconds
  const interval = 1000 / rps
  const pending: Array<Promise<{ total: number; ttfb: number } | null>> = []
  const started = performance.now()
  for (let i = 0; i < total; i++) {
    const due = started + i * interval
    const wait = due - performance.now()
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait))
    pending.push(once(target, stream))
  }
  const samples = await Promise.all(pending)
  return summarize(samples, (performance.now() - started) / 1000)
}

/** Closed-loop saturation: `concurrency` workers back to back for `seconds`; requests per second completed. */
const saturate = async (target: Target, concurrency: number, seconds: number) => {
  const end = performance.now() + seconds * 1000
  let ok = 0
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (performance.now() < end) if (await once(target, false)) ok++
  }))
  return ok / seconds
}

// ---------------------------------------------------------------------------------------------------------------
const main = async () => {
  const upstream = await startUpstream()
  const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "gw-bench-"))
  const gatewayEnv = {
    ...process.env,
    PORT: "0",
    HOST: "127.0.0.1",
    DATA_DIR: dataDir,
    LOG_LEVEL: "warning",
    OPENAI_API_KEY: "sk-bench",
    OPENAI_BASE_URL: `${upstream.url}/v1`,
    MASTER_KEY: Crypto.randomBytes(32).toString("base64"),
    ...(process.env.BENCH_DATABASE_URL ? { DATABASE_URL: process.env.BENCH_DATABASE_URL } : { DATABASE_URL: "" })
  }
  const gateway = spawn(process.execPath, ["--import", "tsx", "layers/main/node.ts"], {
    cwd: root,
    env: { ...gatewayEnv, LOG_LEVEL: "info" },
    stdio: ["ignore", "pipe", "pipe"]
  })
  const portMatch = waitForOutput(gateway, /Listening on http:\/\/[^:]+:(\d+)/)
  const keyMatch = waitForOutput(gateway, /sak_[A-Za-z0-9_-]{43}/)
  const port = Number((await portMatch)[1])
  const apiKey = (await keyMatch)[0]
  // The access log stays on (info level), as in production.
  gateway.stdout?.resume()

  const portkeyPort = 18000 + Math.floor(Math.random() * 1000)
  const portkey = spawn(process.execPath, [
    Path.join(root, "node_modules/@portkey-ai/gateway/build/start-server.js"),
    `--port=${portkeyPort}`,
    "--headless"
  ], { cwd: root, env: { ...process.env, NODE_ENV: "production" }, stdio: ["ignore", "pipe", "pipe"] })
  await waitForOutput(portkey, /running|Ready|listening/i).catch(() => undefined)
  await new Promise((resolve) => setTimeout(resolve, 1000))
  portkey.stdout?.resume()
  portkey.stderr?.resume()

  const targets: ReadonlyArray<Target> = [
    { name: "direct", url: `${upstream.url}/v1/chat/completions`, headers: { authorization: "Bearer sk-bench" } },
    { name: "gateway", url: `http://127.0.0.1:${port}/api/v1/chat/completions`, headers: { authorization: `Bearer ${apiKey}` } },
    {
      name: "portkey",
      url: `http://127.0.0.1:${portkeyPort}/v1/chat/completions`,
      headers: {
        authorization: "Bearer sk-bench",
        "x-portkey-provider": "openai",
        "x-portkey-custom-host": `${upstream.url}/v1`
      }
    }
  ]
  for (const target of targets) {
    const probe = await once(target, false)
    if (!probe) throw new Error(`${target.name} does not answer`)
  }

  let peakRss = 0
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssOf(gateway.pid!))), 100)
  const results: Record<string, Record<string, Run>> = {}
  for (const target of targets) {
    results[target.name] = {
      "sequential": await sequential(target, false),
      "sequential stream": await sequential(target, true),
      [`${RPS} rps`]: await fixedRate(target, false, RPS, SECONDS),
      [`${RPS} rps stream`]: await fixedRate(target, true, RPS, SECONDS)
    }
  }
  const saturation: Record<string, number> = {}
  for (const target of targets.slice(1)) saturation[target.name] = await saturate(target, 64, 5)
  clearInterval(sampler)

  const fmt = (n: number) => (Number.isFinite(n) ? n.toFixed(3) : "n/a")
  const lines: Array<string> = []
  lines.push(`Upstream latency ${UPSTREAM_MS} ms; ${SEQUENTIAL} sequential calls; ${RPS} rps for ${SECONDS} s; ` +
    `database: ${process.env.BENCH_DATABASE_URL ? "PostgreSQL" : "embedded PGlite"}; node ${process.version}; ` +
    `${Os.cpus().length} cores.`)
  lines.push("")
  lines.push("| scenario | target | p50 ms | p99 ms | added p50 | added p99 | TTFB p50 | added TTFB p50 | ok | failed | req/s |")
  lines.push("|---|---|---|---|---|---|---|---|---|---|---|")
  for (const scenario of Object.keys(results.direct!)) {
    const direct = results.direct![scenario]!
    for (const target of targets) {
      const run = results[target.name]![scenario]!
      lines.push(`| ${scenario} | ${target.name} | ${fmt(run.p50)} | ${fmt(run.p99)} | ${target.name === "direct" ? "" : fmt(run.p50 - direct.p50)} | ` +
        `${target.name === "direct" ? "" : fmt(run.p99 - direct.p99)} | ${fmt(run.ttfb50)} | ` +
        `${target.name === "direct" ? "" : fmt(run.ttfb50 - direct.ttfb50)} | ${run.ok} | ${run.failed} | ${run.throughput.toFixed(0)} |`)
    }
  }
  lines.push("")
  lines.push(`Saturation (64 concurrent clients, 5 s, non-streaming): gateway ${saturation.gateway!.toFixed(0)} req/s, ` +
    `Portkey ${saturation.portkey!.toFixed(0)} req/s, ratio ${(saturation.gateway! / saturation.portkey!).toFixed(2)}×.`)
  lines.push(`Gateway peak RSS: ${peakRss.toFixed(0)} MB.`)
  console.log(lines.join("\n"))

  gateway.kill("SIGTERM")
  portkey.kill("SIGTERM")
  upstream.close()
  await agent.close()
  setTimeout(() => {
    Fs.rmSync(dataDir, { recursive: true, force: true })
    process.exit(0)
  }, 1500)
}

void main()
