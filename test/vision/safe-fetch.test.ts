/**
 * The SSRF-safe fetcher against a real local HTTP server: schemes, credentials, private and metadata
 * addresses, loopback only when allowed, redirects (at most 5, each revalidated), the size cap while streaming,
 * and the deadline.
 */
import { Effect, Either } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { isAllowedAddress, safeFetch, type SafeFetchOptions } from "../../layers/safe-fetch.ts"

let server: Http.Server
let origin: string
const closedEarly: Array<string> = []

beforeAll(async () => {
  server = Http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://local")
    res.on("close", () => {
      if (!res.writableFinished) closedEarly.push(url.pathname)
    })
    const hops = /^\/hops\/(\d+)$/.exec(url.pathname)
    if (hops) {
      const left = Number(hops[1])
      res.writeHead(302, { location: left > 0 ? `/hops/${left - 1}` : "/bytes/10" })
      return res.end()
    }
    const bytes = /^\/bytes\/(\d+)$/.exec(url.pathname)
    if (bytes) {
      const body = Buffer.alloc(Number(bytes[1]), 0x61)
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": body.length })
      return res.end(body)
    }
    switch (url.pathname) {
      case "/stream": {
        // No Content-Length: only counting while reading can stop it. 64 KiB chunks, 10 MiB in all.
        res.writeHead(200, { "content-type": "application/octet-stream" })
        let sent = 0
        const pump = () => {
          while (sent < 10 * 1024 * 1024) {
            sent += 65_536
            if (!res.write(Buffer.alloc(65_536, 0x62))) return void res.once("drain", pump)
          }
          res.end()
        }
        return pump()
      }
      case "/declared-large":
        res.writeHead(200, { "content-length": String(50 * 1024 * 1024) })
        return res.write(Buffer.alloc(10))
      case "/to-private":
        res.writeHead(301, { location: "http://10.0.0.7/secret" })
        return res.end()
      case "/to-metadata":
        res.writeHead(307, { location: "http://169.254.169.254/latest/meta-data/" })
        return res.end()
      case "/to-file":
        res.writeHead(302, { location: "file:///etc/passwd" })
        return res.end()
      case "/slow":
        return // never answers
      case "/missing":
        res.writeHead(404)
        return res.end("no")
      default:
        res.writeHead(200, { "content-type": "text/plain" })
        return res.end("ok")
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
})

const options: SafeFetchOptions = { maxBytes: 1024 * 1024, timeoutMs: 3000, allowLoopback: true }
const fetchEither = (url: string, overrides: Partial<SafeFetchOptions> = {}) =>
  Effect.runPromise(Effect.either(safeFetch(url, { ...options, ...overrides })))
const errorCode = async (url: string, overrides: Partial<SafeFetchOptions> = {}) => {
  const result = await fetchEither(url, overrides)
  return Either.isLeft(result) ? result.left.code : "succeeded"
}

describe("addresses", () => {
  it.each([
    "10.0.0.1", "172.16.5.4", "192.168.1.1", "127.0.0.1", "169.254.169.254", "100.64.0.1", "0.0.0.0",
    "255.255.255.255", "::1", "fe80::1", "fd00:ec2::254", "::ffff:10.0.0.1", "::ffff:127.0.0.1", "64:ff9b::a00:1",
    "2002:a00:1::", "168.63.129.16", "100.100.100.200", "224.0.0.1"
  ])("%s is refused", (address) => {
    expect(isAllowedAddress(address)).toBe(false)
  })

  it.each(["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111"])("%s (public unicast) is allowed", (address) => {
    expect(isAllowedAddress(address)).toBe(true)
  })

  it("loopback is allowed only when the setting says so, and nothing else with it", () => {
    expect(isAllowedAddress("127.0.0.1", true)).toBe(true)
    expect(isAllowedAddress("::1", true)).toBe(true)
    expect(isAllowedAddress("10.0.0.1", true)).toBe(false)
    expect(isAllowedAddress("169.254.169.254", true)).toBe(false)
  })
})

describe("URLs", () => {
  it.each(["ftp://example.com/a.png", "file:///etc/passwd", "gopher://example.com/", "javascript:alert(1)", "not a url"])(
    "%s is an invalid_url",
    async (url) => {
      expect(await errorCode(url)).toBe("invalid_url")
    }
  )

  it("embedded credentials are refused", async () => {
    expect(await errorCode(`http://user:secret@${origin.slice(7)}/`)).toBe("unsafe_url")
  })

  it.each([
    "http://10.0.0.7/", "http://192.168.0.10/", "http://169.254.169.254/latest/meta-data/", "http://[::1]/",
    "http://[fd00::1]/", "http://2130706433/", "http://0x7f.1/", "http://metadata.google.internal/computeMetadata/v1/"
  ])("%s is an unsafe_url (no connection attempted)", async (url) => {
    expect(await errorCode(url, { allowLoopback: false })).toBe("unsafe_url")
  })

  it("loopback is refused by default, by address and by name", async () => {
    expect(await errorCode(`${origin}/`, { allowLoopback: false })).toBe("unsafe_url")
    expect(await errorCode(`${origin.replace("127.0.0.1", "localhost")}/`, { allowLoopback: false })).toBe("unsafe_url")
  })

  it("with loopback allowed, a local name connects to the address that was checked", async () => {
    const result = await fetchEither(`${origin.replace("127.0.0.1", "localhost")}/bytes/5`)
    expect(Either.isRight(result) && result.right.bytes.length).toBe(5)
  })

  it("an unresolvable host is dns_unavailable", async () => {
    expect(await errorCode("http://no-such-host.invalid/image.png")).toBe("dns_unavailable")
  })
})

describe("redirects", () => {
  it("5 redirects are followed", async () => {
    const result = await fetchEither(`${origin}/hops/4`)
    expect(Either.isRight(result) && { redirects: result.right.redirects, size: result.right.bytes.length }).toEqual({
      redirects: 5,
      size: 10
    })
  })

  it("a 6th redirect is refused", async () => {
    expect(await errorCode(`${origin}/hops/5`)).toBe("too_many_redirects")
  })

  it("each redirect target is checked again: private, metadata and file targets are refused", async () => {
    expect(await errorCode(`${origin}/to-private`)).toBe("unsafe_url")
    expect(await errorCode(`${origin}/to-metadata`)).toBe("unsafe_url")
    expect(await errorCode(`${origin}/to-file`)).toBe("invalid_url")
  })
})

describe("size and time", () => {
  it("a body of exactly maxBytes is accepted and one byte more is refused", async () => {
    const exact = await fetchEither(`${origin}/bytes/1000`, { maxBytes: 1000 })
    expect(Either.isRight(exact) && exact.right.bytes.length).toBe(1000)
    expect(await errorCode(`${origin}/bytes/1001`, { maxBytes: 1000 })).toBe("response_too_large")
  })

  it("a body without Content-Length is cut while streaming once over the cap", async () => {
    expect(await errorCode(`${origin}/stream`, { maxBytes: 100_000 })).toBe("response_too_large")
    await expect.poll(() => closedEarly.includes("/stream")).toBe(true)
  })

  it("a declared Content-Length over the cap is refused before reading", async () => {
    expect(await errorCode(`${origin}/declared-large`)).toBe("response_too_large")
  })

  it("a server that does not answer in time is a fetch_timeout and the connection is closed", async () => {
    const started = Date.now()
    expect(await errorCode(`${origin}/slow`, { timeoutMs: 200 })).toBe("fetch_timeout")
    expect(Date.now() - started).toBeLessThan(2000)
    await expect.poll(() => closedEarly.includes("/slow")).toBe(true)
  })

  it("an error status is fetch_failed with the status", async () => {
    const result = await fetchEither(`${origin}/missing`)
    expect(Either.isLeft(result) && { code: result.left.code, status: result.left.status }).toEqual({
      code: "fetch_failed",
      status: 404
    })
  })
})
