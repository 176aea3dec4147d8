/**
 * 60 voice requests per minute per project, counted in the database so that every server process shares the
 * count. The window is the database's clock minute; tests start away from a minute boundary.
 */
import * as ChildProcess from "node:child_process"
import * as Net from "node:net"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Gateway, startGateway } from "../harness.ts"
import { speak, startVoiceFakes, transcribe, type VoiceFakes, voiceEnv } from "./setup.ts"

let fakes: VoiceFakes
let gw: Gateway
const env = () => {
  const base = voiceEnv(fakes)
  delete base.VOICE_RATE_LIMIT_PER_MINUTE // the default: 60
  return base
}

beforeAll(async () => {
  fakes = await startVoiceFakes()
  fakes.openai.audio.chunks = 1
  fakes.openai.audio.size = 64
  gw = await startGateway({ env: env() })
})
afterAll(async () => {
  await gw?.close()
  await fakes?.close()
})

/** Waits for the next minute when fewer than `seconds` remain in this one, so a burst fits in one window. */
const awayFromMinuteBoundary = async (seconds = 20) => {
  const left = 60 - (Date.now() / 1000) % 60
  if (left < seconds) await new Promise((resolve) => setTimeout(resolve, left * 1000 + 250))
}

const tts = (baseUrl: string, apiKey: string) => speak(baseUrl, apiKey, { input: "hi" })

describe("rate limit", () => {
  it("a project may make 60 voice requests (TTS and STT together) in a minute; the 61st is 429 rate_limit_exceeded", async () => {
    const project = await gw.createProject()
    await awayFromMinuteBoundary()
    const statuses: Array<number> = []
    for (let i = 0; i < 60; i++) {
      const res = i % 2 === 0 ? await tts(gw.baseUrl, project.apiKey) : await transcribe(gw.baseUrl, project.apiKey, {})
      statuses.push(res.status)
    }
    expect(statuses.every((s) => s === 200)).toBe(true)
    const limited = await tts(gw.baseUrl, project.apiKey)
    expect(limited.status).toBe(429)
    expect(limited.json).toMatchObject({ error: "rate_limit_exceeded", request_id: limited.headers.get("x-request-id") })
    const retryAfter = Number(limited.headers.get("retry-after"))
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(60)
    const stt = await transcribe(gw.baseUrl, project.apiKey, {})
    expect(stt.status).toBe(429)
    // Another project has its own count; the public registry is not limited.
    const other = await gw.createProject()
    expect((await tts(gw.baseUrl, other.apiKey)).status).toBe(200)
    expect((await fetch(`${gw.baseUrl}/api/ai/audio/voices`)).status).toBe(200)
  })

  it("the count is shared by two server processes on one database", async () => {
    const second = await startGateway({ env: env(), sharedWith: gw })
    try {
      const project = await gw.createProject()
      await awayFromMinuteBoundary()
      for (let i = 0; i < 30; i++) {
        expect((await tts(gw.baseUrl, project.apiKey)).status).toBe(200)
        expect((await tts(second.baseUrl, project.apiKey)).status).toBe(200)
      }
      expect((await tts(second.baseUrl, project.apiKey)).status).toBe(429)
      expect((await tts(gw.baseUrl, project.apiKey)).status).toBe(429)
    } finally {
      await second.close()
    }
  })

  it("concurrent requests from both processes never exceed the limit", async () => {
    const second = await startGateway({ env: env(), sharedWith: gw })
    try {
      const project = await gw.createProject()
      await awayFromMinuteBoundary()
      const results = await Promise.all(
        Array.from({ length: 80 }, (_, i) => tts(i % 2 === 0 ? gw.baseUrl : second.baseUrl, project.apiKey))
      )
      expect(results.filter((r) => r.status === 200)).toHaveLength(60)
      expect(results.filter((r) => r.status === 429)).toHaveLength(20)
    } finally {
      await second.close()
    }
  })

  // On PostgreSQL only: a second OS process on an embedded database joins the owner's pglite-socket, which can
  // interleave two connections' protocol messages (see ARCHITECTURE.md); the in-process variants above cover PGlite.
  it.runIf(process.env.TEST_DATABASE_URL)("the count is shared with a separate OS process (npm start) on the same database", async () => {
    const port = await freePort()
    // Node itself with the tsx loader (not the tsx CLI), so SIGTERM reaches the server process directly.
    const child = ChildProcess.spawn(process.execPath, ["--import", Path.resolve("node_modules/tsx/dist/loader.mjs"), "layers/main/node.ts"], {
      env: { ...process.env, ...gw.env, ...env(), PORT: String(port), HOST: "127.0.0.1", LOG_LEVEL: "info" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stderr = ""
    child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    child.stdout?.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    try {
      const childUrl = `http://127.0.0.1:${port}`
      await waitForHealthy(childUrl, 100_000).catch((error: unknown) => {
        throw new Error(`${String(error)}\n${stderr.slice(-2000)}`)
      })
      const project = await gw.createProject()
      await awayFromMinuteBoundary()
      for (let i = 0; i < 30; i++) {
        const fromChild = await tts(childUrl, project.apiKey).catch((error: unknown) => {
          throw new Error(`request ${i} to the child failed: ${String(error)}\n${stderr.slice(-3000)}`)
        })
        expect(fromChild.status).toBe(200)
        expect((await tts(gw.baseUrl, project.apiKey)).status).toBe(200)
      }
      expect((await tts(childUrl, project.apiKey)).status).toBe(429)
      expect((await tts(gw.baseUrl, project.apiKey)).status).toBe(429)
    } finally {
      const exited = new Promise((resolve) => child.once("exit", resolve))
      child.kill("SIGTERM")
      const forced = setTimeout(() => child.kill("SIGKILL"), 15_000)
      await exited
      clearTimeout(forced)
    }
  }, 180_000)
})

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = Net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address ? address.port : 0
      server.close(() => resolve(port))
    })
  })

const waitForHealthy = async (url: string, timeoutMs: number) => {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const ok = await fetch(`${url}/healthz`).then((r) => r.ok, () => false)
    if (ok) return
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  throw new Error(`gateway at ${url} did not become healthy`)
}
