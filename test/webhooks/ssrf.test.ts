/**
 * Target checks with the default setting (private targets not allowed): at subscribe time, and again at
 * delivery time against the address the host resolves to then.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { isAllowedAddress } from "../../modules/webhooks/Target.ts"
import { startReceiver, type Receiver } from "../fakes/webhook-receiver.ts"
import { type Gateway, startGateway } from "../harness.ts"
import { api, deliveryWhen } from "./helpers.ts"

let gw: Gateway
let receiver: Receiver
beforeAll(async () => {
  receiver = await startReceiver()
  gw = await startGateway({ env: { QUEUE_POLL_INTERVAL_MS: "50" } })
})
afterAll(async () => {
  await gw?.close()
  await receiver?.close()
})

describe("at subscribe time", () => {
  it.each([
    ["loopback", "http://127.0.0.1:8080/hook"],
    ["loopback by name", "http://localhost/hook"],
    ["loopback in hex", "http://0x7f000001/hook"],
    ["IPv6 loopback", "http://[::1]/hook"],
    ["IPv4-mapped loopback", "http://[::ffff:127.0.0.1]/hook"],
    ["private 10/8", "https://10.1.2.3/hook"],
    ["private 172.16/12", "https://172.16.0.9/hook"],
    ["private 192.168/16", "https://192.168.1.20/hook"],
    ["cloud metadata (link-local)", "http://169.254.169.254/latest/meta-data"],
    ["IPv6 link-local", "http://[fe80::1]/hook"],
    ["IPv6 unique-local (AWS metadata fd00:ec2::254)", "http://[fd00:ec2::254]/hook"],
    ["carrier-grade NAT (Alibaba metadata)", "http://100.100.100.200/hook"],
    ["unspecified", "http://0.0.0.0/hook"]
  ])("rejects %s with 400 unsafe_url", async (_name, url) => {
    const res = await api(gw).call("POST", "/v1/webhooks", { url })
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ error: { code: "unsafe_url", param: "url" }, status: "failed" })
  })

  it("accepts a public address", async () => {
    const res = await api(gw).call("POST", "/v1/webhooks", { url: "https://93.184.215.14/hook" })
    expect(res.status).toBe(201)
  })

  it("a PATCH to a private address is rejected the same way", async () => {
    const created = await api(gw).createEndpoint({ url: "https://93.184.215.14/a" })
    const res = await api(gw).call("PATCH", `/v1/webhooks/${created.id}`, { url: "http://192.168.0.1/b" })
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ error: { code: "unsafe_url" } })
    expect((await api(gw).endpoint(created.id)).url).toBe("https://93.184.215.14/a")
  })
})

describe("at delivery time", () => {
  it("an endpoint whose address turned private is not contacted, and the delivery fails as blocked", async () => {
    const project = await gw.createProject()
    const client = api(gw, project)
    const endpoint = await client.createEndpoint({ url: "https://93.184.215.14/hook" })
    // What DNS rebinding would do: the stored target now leads to loopback.
    await gw.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql`UPDATE webhook_endpoints SET url = ${receiver.url} WHERE id = ${endpoint.id}`))
    const ping = await client.ping(endpoint.id)
    const delivery = await deliveryWhen(gw, project, ping.id, (d) => d.status !== "pending")
    expect(delivery.status).toBe("failed")
    expect(delivery.attempts).toHaveLength(1)
    expect(delivery.attempts[0]).toMatchObject({ status_code: null, latency_ms: null })
    expect(delivery.attempts[0]!.error).toMatch(/^blocked: url resolves to 127\.0\.0\.1/)
    expect(receiver.received).toHaveLength(0)
  })
})

describe("address classes", () => {
  it("private ranges pass only when the operator allows them; metadata, multicast and broadcast never", () => {
    for (const address of ["127.0.0.1", "10.0.0.1", "169.254.1.1", "::1", "fe80::1", "fc00::1", "100.64.0.1"]) {
      expect(isAllowedAddress(address, false), address).toBe(false)
      expect(isAllowedAddress(address, true), address).toBe(true)
    }
    for (const address of ["169.254.169.254", "::ffff:169.254.169.254", "168.63.129.16", "224.0.0.1", "255.255.255.255", "0.0.0.0", "ff02::1", "not-an-ip"]) {
      expect(isAllowedAddress(address, true), address).toBe(false)
    }
    for (const address of ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c", "::ffff:93.184.215.14"]) {
      expect(isAllowedAddress(address, false), address).toBe(true)
    }
  })
})
