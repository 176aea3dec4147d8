/**
 * The service as a user runs it: the Node entry point with the embedded default, its first-start keys, a restart
 * that keeps the data, the CLI beside a running server, draining on SIGTERM, and the same sources under Deno.
 */
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { bearer, call } from "../http.ts"
import { listeningPort, runCli, startDeno, startNode } from "../process.ts"

const dirs: Array<string> = []
const tempDir = () => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "gw-run-"))
  dirs.push(dir)
  return dir
}
afterAll(() => dirs.forEach((dir) => Fs.rmSync(dir, { recursive: true, force: true })))

const baseEnv = (dataDir: string): Record<string, string> => ({
  DATA_DIR: dataDir,
  PORT: "0",
  HOST: "127.0.0.1",
  DATABASE_URL: "",
  MASTER_KEY: "",
  LOG_LEVEL: "info"
})

/** Sends the headers and half of a JSON body now, and the rest when asked: an in-flight request. */
const slowRequest = (port: number, path: string, json: unknown) => {
  const body = Buffer.from(JSON.stringify(json))
  const socket = Net.connect({ port, host: "127.0.0.1" })
  let response = ""
  socket.on("data", (chunk) => (response += chunk.toString("utf8")))
  const done = new Promise<string>((resolve) => socket.on("close", () => resolve(response)))
  socket.write(
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n`
  )
  socket.write(body.subarray(0, 5))
  return { finish: () => socket.write(body.subarray(5)), done }
}

describe("the Node entry point", () => {
  it("starts with no setup, prints the default project's keys once, and keeps its data across a restart", async () => {
    const dataDir = tempDir()
    const first = startNode(baseEnv(dataDir))
    try {
      const port = await listeningPort(first)
      const secret = (await first.waitFor(/csk_[A-Za-z0-9_-]{43}/))[0]
      const apiKey = (await first.waitFor(/sak_[A-Za-z0-9_-]{43}/))[0]
      const me = await call(`http://127.0.0.1:${port}`, "GET", "/v1/project", { headers: bearer(secret) })
      expect(me.status).toBe(200)
      expect((me.body as { credential: string }).credential).toBe("secret")

      // The CLI joins the running server's embedded database.
      const projectId = (me.body as { id: string }).id
      const listed = await runCli(["keys", "list", "--project", projectId, "--json"], baseEnv(dataDir))
      expect(listed.code).toBe(0)
      const keys = (JSON.parse(listed.output.trim().split("\n").pop()!) as { data: Array<{ kind: string }> }).data
      expect(keys.map((k) => k.kind).sort()).toEqual(["api", "secret"])
      expect(listed.output).not.toContain(secret)

      // The first-start banner is the only place the keys appear: the JSON log lines never hold them.
      const logLines = first.output().split("\n").filter((line) => line.startsWith("{"))
      expect(logLines.length).toBeGreaterThan(0)
      for (const line of logLines) {
        expect(line).not.toContain(secret)
        expect(line).not.toContain(apiKey)
      }
      expect(await first.stop()).toBe(0)

      const second = startNode(baseEnv(dataDir))
      try {
        const port2 = await listeningPort(second)
        expect(second.output()).not.toMatch(/csk_/)
        const again = await call(`http://127.0.0.1:${port2}`, "GET", "/v1/project", { headers: bearer(secret) })
        expect(again.status).toBe(200)
        expect((again.body as { id: string }).id).toBe(projectId)
      } finally {
        await second.stop()
      }
    } finally {
      await first.stop("SIGKILL")
    }
  })

  it("on SIGTERM stops accepting, finishes the in-flight request, then exits 0", async () => {
    const running = startNode(baseEnv(tempDir()))
    try {
      const port = await listeningPort(running)
      const inflight = slowRequest(port, "/api/auth/login", { email: "someone@example.com", password: "not the password" })
      await new Promise((resolve) => setTimeout(resolve, 300))
      running.child.kill("SIGTERM")
      await new Promise((resolve) => setTimeout(resolve, 500))
      // New connections are refused while the old one drains.
      await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow()
      inflight.finish()
      const response = await inflight.done
      expect(response).toMatch(/^HTTP\/1\.1 401/)
      expect(response).toContain("x-request-id")
      expect(await running.exited).toBe(0)
    } finally {
      await running.stop("SIGKILL")
    }
  })

  it("refuses to start on PostgreSQL without MASTER_KEY", async () => {
    const running = startNode({ ...baseEnv(tempDir()), DATABASE_URL: "postgres://postgres@127.0.0.1:5432/test" })
    const code = await running.exited
    expect(code).not.toBe(0)
    expect(running.output()).toContain("MASTER_KEY is required")
  })
})

describe("Deno", () => {
  it("serves the same API from the same sources", async () => {
    const running = startDeno({ ...baseEnv(tempDir()), MASTER_KEY: Crypto.randomBytes(32).toString("base64") })
    try {
      const port = await listeningPort(running)
      const secret = (await running.waitFor(/csk_[A-Za-z0-9_-]{43}/))[0]
      const base = `http://127.0.0.1:${port}`
      expect((await call(base, "GET", "/healthz")).status).toBe(200)
      const me = await call(base, "GET", "/v1/project", { headers: bearer(secret) })
      expect(me.status).toBe(200)
      const refused = await call(base, "GET", "/v1/project", { headers: bearer("csk_wrong") })
      expect(refused.status).toBe(401)
      expect(refused.headers.get("x-request-id")).toMatch(/^req_/)
      expect(await running.stop()).toBe(0)
    } finally {
      await running.stop("SIGKILL")
    }
  })
})
