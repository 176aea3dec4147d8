/**
 * Image content sent to the chat endpoints goes through vision (contract §4.7): images are checked and sent
 * inline, a model without vision support is upgraded to a vision model of the same provider, and the answer names
 * the model that served it.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { bearer, call, serviceKey } from "../http.ts"
import { b64, dataUrl, png, svg } from "./images.ts"
import { readSse, sentImages, startVisionWorld, usageRows, type VisionWorld } from "./helpers.ts"

let world: VisionWorld
const picture = png(5, 5)

beforeAll(async () => {
  world = await startVisionWorld()
  world.images.put("/picture.png", picture, "image/png")
})
afterAll(async () => {
  await world?.close()
})
beforeEach(() => {
  world.openai.reset()
  world.anthropic.reset()
  world.google.reset()
})

const withImage = (model: string, url: string, extra: Record<string, unknown> = {}) => ({
  model,
  messages: [
    { role: "system", content: "Be brief." },
    { role: "user", content: [{ type: "text", text: "What is in the picture?" }, { type: "image_url", image_url: { url, detail: "low" } }] }
  ],
  ...extra
})

const chat = (body: unknown, key = world.gw.project.apiKey) =>
  call(world.gw.baseUrl, "POST", "/api/ai/chat", { headers: serviceKey(key), json: body })

describe("chat with images", () => {
  it.each([
    ["gpt-3.5-turbo", "gpt-4o-mini", "openai", () => world.openai],
    ["claude-haiku-4-5", "claude-sonnet-4-5", "anthropic", () => world.anthropic],
    ["gemini-pro", "gemini-2.5-flash", "google", () => world.google]
  ] as const)("%s lacks vision: the call is upgraded to %s and the answer says so", async (asked, served, provider, fake) => {
    const res = await chat(withImage(asked, dataUrl("image/png", picture)))
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ model: served, provider, object: "chat.completion" })
    const upstream = fake().lastRequest()!
    expect(provider === "google" ? upstream.path : (upstream.body as any).model).toContain(served)
    expect(sentImages(upstream)).toEqual([{ mime: "image/png", data: b64(picture) }])
  })

  it("a vision model is kept, and an image URL is fetched by the gateway and sent inline", async () => {
    const res = await chat(withImage("gpt-4o", `${world.images.origin}/picture.png`))
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ model: "gpt-4o" })
    const part = (world.openai.lastRequest()!.body as any).messages[1].content[1]
    expect(part).toEqual({ type: "image_url", image_url: { url: dataUrl("image/png", picture), detail: "low" } })
  })

  it("chat with images is recorded as a vision usage row under the upgraded model", async () => {
    const project = await world.gw.createProject()
    const res = await chat(withImage("gpt-3.5-turbo", dataUrl("image/png", picture)), project.apiKey)
    expect(res.status).toBe(200)
    const rows = await usageRows(world.gw, project.secretKey)
    expect(rows[0]).toMatchObject({ kind: "vision", model: "gpt-4o-mini", provider: "openai" })
  })

  it("chat without images is untouched: no upgrade, kind chat", async () => {
    const project = await world.gw.createProject()
    const res = await chat({ model: "gpt-3.5-turbo", messages: [{ role: "user", content: "hi" }] }, project.apiKey)
    expect(res.body).toMatchObject({ model: "gpt-3.5-turbo" })
    const rows = await usageRows(world.gw, project.secretKey)
    expect(rows[0]).toMatchObject({ kind: "chat", model: "gpt-3.5-turbo" })
  })

  it("images in chat are validated like vision images: an SVG is refused before the provider call", async () => {
    const res = await chat(withImage("gpt-4o-mini", dataUrl("image/svg+xml", svg())))
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({
      error: "unsupported_format",
      image_index: 0,
      param: "messages[1].content[1]",
      detected_format: "image/svg+xml"
    })
    expect(world.openai.chatRequests).toHaveLength(0)
  })

  it("a streamed chat with an image is upgraded too, and its chunks name the serving model", async () => {
    world.google.enqueue({ text: ["a ", "picture"] })
    const response = await fetch(`${world.gw.baseUrl}/api/ai/chat`, {
      method: "POST",
      headers: { ...serviceKey(world.gw.project.apiKey), "content-type": "application/json" },
      body: JSON.stringify(withImage("gemini-pro", dataUrl("image/png", picture), { stream: true }))
    })
    expect(response.status).toBe(200)
    const chunks = (await readSse(response)).slice(0, -1).map((m) => JSON.parse(m.data))
    expect(chunks.every((c) => c.model === "gemini-2.5-flash")).toBe(true)
  })

  it("the OpenAI-compatible path routes images the same way, with errors in the platform envelope", async () => {
    const okRes = await call(world.gw.baseUrl, "POST", "/api/v1/chat/completions", {
      headers: bearer(world.gw.project.apiKey),
      json: withImage("gpt-3.5-turbo", dataUrl("image/png", picture))
    })
    expect(okRes.body).toMatchObject({ model: "gpt-4o-mini" })
    const bad = await call(world.gw.baseUrl, "POST", "/api/v1/chat/completions", {
      headers: bearer(world.gw.project.apiKey),
      json: withImage("gpt-4o-mini", dataUrl("image/jpeg", picture))
    })
    expect(bad.status).toBe(400)
    expect(bad.body).toMatchObject({
      error: { code: "unsupported_format", param: "messages[1].content[1]", message: expect.stringContaining("Image 0") },
      status: "failed"
    })
  })
})
