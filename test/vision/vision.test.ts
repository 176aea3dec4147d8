/**
 * Vision through the real server against fake OpenAI, Anthropic and Gemini upstreams: every input form, several
 * images at once, the presets and their answer fields, structured output, streaming, usage rows and OpenAPI.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { Billing } from "../../modules/usage/Service.ts"
import { CLASSIFY_PROMPT, DESCRIBE_PROMPT, OCR_PROMPT } from "../../modules/vision/presets.ts"
import { call, serviceKey } from "../http.ts"
import { b64, dataUrl, gif, jpeg, png, webp } from "./images.ts"
import {
  multipartCall,
  readSse,
  sentImages,
  sentText,
  startVisionWorld,
  usageRows,
  visionCall,
  type VisionWorld
} from "./helpers.ts"

let world: VisionWorld
const catPng = png(4, 3)
const photoJpeg = jpeg(32, 16)

beforeAll(async () => {
  world = await startVisionWorld()
  world.images.put("/cat.png", catPng, "image/png")
  world.images.put("/photo.jpg", photoJpeg, "image/jpeg")
  world.images.put("/mislabelled.png", photoJpeg, "image/png")
})
afterAll(async () => {
  await world?.close()
})
beforeEach(() => {
  world.openai.reset()
  world.anthropic.reset()
  world.google.reset()
})

const FAMILIES = [
  ["gpt-4o-mini", "openai", () => world.openai],
  ["claude-3-5-haiku-20241022", "anthropic", () => world.anthropic],
  ["gemini-2.0-flash", "google", () => world.google]
] as const

describe("input forms", () => {
  it("image_url is fetched by the gateway and sent inline; the answer has analysis, model, provider, usage, cost", async () => {
    world.openai.enqueue({ text: "A small grey cat.", usage: { promptTokens: 120, completionTokens: 5 } })
    const res = await visionCall(world.gw, "/api/ai/vision", {
      image_url: `${world.images.origin}/cat.png`,
      prompt: "What is this?",
      model: "gpt-4o-mini"
    })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      analysis: "A small grey cat.",
      model: "gpt-4o-mini",
      provider: "openai",
      usage: { promptTokens: 120, completionTokens: 5, totalTokens: 125 },
      cost: { providerCostUsd: expect.any(Number), serviceChargeUsd: 0, markupPercentage: 0 }
    })
    expect(res.headers.get("x-provider")).toBe("openai")
    const upstream = world.openai.lastRequest()
    expect(sentImages(upstream)).toEqual([{ mime: "image/png", data: b64(catPng) }])
    expect(sentText(upstream)).toBe("What is this?")
  })

  it("the URL's own Content-Type is not trusted: a JPEG served as image/png goes up as image/jpeg", async () => {
    const res = await visionCall(world.gw, "/api/ai/vision", { image_url: `${world.images.origin}/mislabelled.png` })
    expect(res.status).toBe(200)
    expect(sentImages(world.openai.lastRequest())).toEqual([{ mime: "image/jpeg", data: b64(photoJpeg) }])
  })

  it("a redirected image URL is followed", async () => {
    const res = await visionCall(world.gw, "/api/ai/vision", { image_url: `${world.images.origin}/redirect/cat.png` })
    expect(res.status).toBe(200)
    expect(sentImages(world.openai.lastRequest())).toEqual([{ mime: "image/png", data: b64(catPng) }])
  })

  it("image_base64 with mime_type goes to Anthropic as a base64 image block", async () => {
    const res = await visionCall(world.gw, "/api/ai/vision", {
      image_base64: b64(photoJpeg),
      mime_type: "image/jpeg",
      model: "claude-3-5-haiku-20241022"
    })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ provider: "anthropic", model: "claude-3-5-haiku-20241022", analysis: expect.stringContaining("[1 image]") })
    const blocks = (world.anthropic.lastRequest()!.body as any).messages[0].content
    expect(blocks).toContainEqual({ type: "image", source: { type: "base64", media_type: "image/jpeg", data: b64(photoJpeg) } })
  })

  it("a data: URL in image_url is read inline", async () => {
    const res = await visionCall(world.gw, "/api/ai/vision", { image_url: dataUrl("image/png", catPng), model: "gemini-2.0-flash" })
    expect(res.status).toBe(200)
    expect(sentImages(world.google.lastRequest())).toEqual([{ mime: "image/png", data: b64(catPng) }])
  })

  it("the SDK forms image {url} and image {base64, mimeType} work", async () => {
    const byUrl = await visionCall(world.gw, "/api/ai/vision", { image: { url: `${world.images.origin}/photo.jpg` }, model: "gemini-2.0-flash" })
    expect(byUrl.status).toBe(200)
    expect(sentImages(world.google.lastRequest())).toEqual([{ mime: "image/jpeg", data: b64(photoJpeg) }])
    const byBase64 = await visionCall(world.gw, "/api/ai/vision", { image: { base64: b64(catPng), mimeType: "image/png" }, model: "gemini-2.0-flash" })
    expect(byBase64.status).toBe(200)
    expect(sentImages(world.google.lastRequest())).toEqual([{ mime: "image/png", data: b64(catPng) }])
  })

  it.each(FAMILIES)("images[] sends several images in one call to %s, in order", async (model, provider, fake) => {
    const third = webp()
    const res = await visionCall(world.gw, "/api/ai/vision", {
      model,
      prompt: "Compare these",
      images: [
        { url: `${world.images.origin}/cat.png` },
        { base64: b64(photoJpeg), mimeType: "image/jpeg" },
        { base64: b64(third) }
      ]
    })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ provider, model, analysis: "echo: Compare these [3 images]" })
    expect(fake().chatRequests).toHaveLength(1)
    expect(sentImages(fake().lastRequest())).toEqual([
      { mime: "image/png", data: b64(catPng) },
      { mime: "image/jpeg", data: b64(photoJpeg) },
      { mime: "image/webp", data: b64(third) }
    ])
  })

  it("multipart: repeated file fields plus prompt and model", async () => {
    const res = await multipartCall(
      world.gw,
      "/api/ai/vision",
      [["file", "a.png", "image/png", catPng], ["file", "b.jpg", "image/jpeg", photoJpeg]],
      { prompt: "Two pictures", model: "claude-3-5-haiku-20241022" }
    )
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ provider: "anthropic", analysis: "echo: Two pictures [2 images]" })
    expect(sentImages(world.anthropic.lastRequest())).toEqual([
      { mime: "image/png", data: b64(catPng) },
      { mime: "image/jpeg", data: b64(photoJpeg) }
    ])
  })

  it("multipart: files[] fields, unlabelled parts (octet-stream) typed from their bytes", async () => {
    const res = await multipartCall(
      world.gw,
      "/api/ai/vision",
      [["files[]", "one", "application/octet-stream", catPng], ["files[]", "two", "application/octet-stream", gif()]],
      { prompt: "Files array", model: "gpt-4o-mini" }
    )
    expect(res.status).toBe(200)
    expect(sentImages(world.openai.lastRequest()).map((i) => i.mime)).toEqual(["image/png", "image/gif"])
  })

  it("multipart: stream and response_format are read from text fields", async () => {
    const res = await multipartCall(world.gw, "/api/ai/vision", [["file", "a.png", "image/png", catPng]], {
      response_format: "json",
      max_tokens: "50"
    })
    expect(res.status).toBe(200)
    const body = world.openai.lastRequest()!.body as any
    expect(body.response_format).toEqual({ type: "json_object" })
    expect(body.max_tokens ?? body.max_completion_tokens).toBe(50)
  })

  it("no image at all is a 400 in the flat envelope", async () => {
    const res = await visionCall(world.gw, "/api/ai/vision", { prompt: "nothing" })
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ error: "invalid_request", message: expect.stringContaining("No image"), request_id: expect.any(String) })
  })

  it("a body that is neither JSON nor multipart is refused with 415", async () => {
    const res = await call(world.gw.baseUrl, "POST", "/api/ai/vision", {
      headers: { ...serviceKey(world.gw.project.apiKey), "content-type": "text/plain" },
      body: "hello"
    })
    expect(res.status).toBe(415)
    expect(res.body).toMatchObject({ error: "unsupported_media_type" })
  })

  it("the service key is required", async () => {
    const res = await call(world.gw.baseUrl, "POST", "/api/ai/vision", { json: { image_url: "https://example.com/a.png" } })
    expect(res.status).toBe(401)
  })

  it("response_format json asks each family for JSON output", async () => {
    for (const [model, , fake] of FAMILIES) {
      fake().enqueue({ text: '{"objects":["cat"]}' })
      const res = await visionCall(world.gw, "/api/ai/vision", { image_base64: b64(catPng), model, response_format: "json", prompt: "List objects" })
      expect(res.status).toBe(200)
      expect(res.body).toMatchObject({ analysis: '{"objects":["cat"]}' })
      expect(sentText(fake().lastRequest())).toContain("single JSON object")
    }
    expect((world.openai.lastRequest()!.body as any).response_format).toEqual({ type: "json_object" })
    expect((world.google.lastRequest()!.body as any).generationConfig.responseMimeType).toBe("application/json")
  })
})

describe("presets", () => {
  it("describe sends the fixed describe prompt and answers in description", async () => {
    world.openai.enqueue({ text: "A grey square." })
    const res = await visionCall(world.gw, "/api/ai/vision/describe", { image_base64: b64(catPng) })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      description: "A grey square.",
      model: "gpt-4o-mini",
      provider: "openai",
      usage: expect.any(Object),
      cost: expect.any(Object)
    })
    expect(sentText(world.openai.lastRequest())).toBe(DESCRIBE_PROMPT)
  })

  it("ocr sends the fixed OCR prompt and answers in text", async () => {
    world.anthropic.enqueue({ text: "INVOICE 42\nTotal: $10" })
    const res = await visionCall(world.gw, "/api/ai/vision/ocr", { image_base64: b64(catPng), model: "claude-3-5-haiku-20241022" })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ text: "INVOICE 42\nTotal: $10", provider: "anthropic" })
    expect(res.body).not.toHaveProperty("analysis")
    expect(sentText(world.anthropic.lastRequest())).toBe(OCR_PROMPT)
  })

  it("a preset's prompt field is appended as additional instructions", async () => {
    const res = await visionCall(world.gw, "/api/ai/vision/ocr", { image_base64: b64(catPng), prompt: "Only the first line" })
    expect(res.status).toBe(200)
    expect(sentText(world.openai.lastRequest())).toBe(`${OCR_PROMPT}\n\nAdditional instructions: Only the first line`)
  })

  it("classify parses a valid JSON answer into classification and keeps the raw text", async () => {
    const raw = '{"label":"cat","confidence":0.93,"tags":["animal","pet"]}'
    world.google.enqueue({ text: raw })
    const res = await visionCall(world.gw, "/api/ai/vision/classify", {
      image_base64: b64(catPng),
      model: "gemini-2.0-flash",
      categories: ["cat", "dog"]
    })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      classification: { label: "cat", confidence: 0.93, tags: ["animal", "pet"] },
      raw,
      provider: "google"
    })
    const text = sentText(world.google.lastRequest())
    expect(text.startsWith(CLASSIFY_PROMPT)).toBe(true)
    expect(text).toContain('exactly one of: "cat", "dog"')
    expect((world.google.lastRequest()!.body as any).generationConfig.responseMimeType).toBe("application/json")
  })

  it("classify answers classification null with the raw text when the model's answer is not JSON", async () => {
    world.openai.enqueue({ text: "It looks like a cat to me." })
    const res = await visionCall(world.gw, "/api/ai/vision/classify", { image_base64: b64(catPng) })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ classification: null, raw: "It looks like a cat to me." })
    expect((world.openai.lastRequest()!.body as any).response_format).toEqual({ type: "json_object" })
  })

  it("presets take multipart too", async () => {
    world.openai.enqueue({ text: "scan" })
    const res = await multipartCall(world.gw, "/api/ai/vision/describe", [["file", "a.png", "image/png", catPng]])
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ description: "scan" })
  })
})

describe("streaming", () => {
  const stream = (path: string, body: Record<string, unknown>) =>
    fetch(`${world.gw.baseUrl}${path}`, {
      method: "POST",
      headers: { ...serviceKey(world.gw.project.apiKey), "content-type": "application/json" },
      body: JSON.stringify({ ...body, stream: true })
    })

  it.each(FAMILIES)("%s: deltas arrive while the upstream writes, the last line holds usage and cost, then [DONE]", async (model, provider, fake) => {
    fake().enqueue({ text: ["A ", "grey ", "cat", "."], chunkDelayMs: 150, usage: { promptTokens: 40, completionTokens: 4 } })
    const started = Date.now()
    const response = await stream("/api/ai/vision", { image_base64: b64(catPng), model })
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toContain("text/event-stream")
    const messages = await readSse(response)
    expect(messages.at(-1)!.data).toBe("[DONE]")
    const events = messages.slice(0, -1).map((m) => JSON.parse(m.data))
    const deltas = events.filter((e) => "delta" in e)
    expect(deltas.map((e) => e.delta).join("")).toBe("A grey cat.")
    // The first delta was forwarded long before the stream ended (not buffered).
    expect(messages[0]!.at - started).toBeLessThan(messages.at(-1)!.at - started - 300)
    const summary = events.at(-1)
    expect(summary).toEqual({
      done: true,
      analysis: "A grey cat.",
      model,
      provider,
      usage: { promptTokens: 40, completionTokens: 4, totalTokens: 44 },
      cost: { providerCostUsd: expect.any(Number), serviceChargeUsd: 0, markupPercentage: 0 }
    })
  })

  it("a client that hangs up mid-stream aborts the upstream call", async () => {
    world.anthropic.enqueue({ text: ["one ", "two ", "three ", "four "], chunkDelayMs: 300 })
    const controller = new AbortController()
    const response = await fetch(`${world.gw.baseUrl}/api/ai/vision`, {
      method: "POST",
      headers: { ...serviceKey(world.gw.project.apiKey), "content-type": "application/json" },
      body: JSON.stringify({ image_base64: b64(catPng), model: "claude-3-5-haiku-20241022", stream: true }),
      signal: controller.signal
    })
    await response.body!.getReader().read()
    controller.abort()
    expect((await world.anthropic.waitForAbort(5000)).aborted).toBe(true)
  })

  it("a streamed classify ends with the parsed classification", async () => {
    world.anthropic.enqueue({ text: ['{"label":', '"dog"}'] })
    const response = await stream("/api/ai/vision/classify", { image_base64: b64(catPng), model: "claude-3-5-haiku-20241022" })
    const events = (await readSse(response)).slice(0, -1).map((m) => JSON.parse(m.data))
    expect(events.at(-1)).toMatchObject({ done: true, classification: { label: "dog" }, raw: '{"label":"dog"}' })
  })

  it("a validation error before streaming is a plain 400, not a stream", async () => {
    const response = await stream("/api/ai/vision", { image_base64: b64(Buffer.from("not an image")) })
    expect(response.status).toBe(400)
    expect(await response.json()).toMatchObject({ error: "unsupported_format", image_index: 0 })
    expect(world.openai.chatRequests).toHaveLength(0)
  })

  it("an upstream failure after the first byte ends the stream with an error line before [DONE]", async () => {
    world.openai.enqueue({ text: ["partial "], streamError: { message: "boom" } })
    const response = await stream("/api/ai/vision", { image_base64: b64(catPng) })
    const messages = await readSse(response)
    expect(messages.at(-1)!.data).toBe("[DONE]")
    expect(JSON.parse(messages[0]!.data)).toEqual({ delta: "partial " })
    expect(JSON.parse(messages.at(-2)!.data)).toMatchObject({ error: "upstream_error" })
  })
})

describe("billing", () => {
  it("a vision call is recorded as a usage row of kind vision, priced from the catalog", async () => {
    const project = await world.gw.createProject()
    world.openai.enqueue({ text: "ok", usage: { promptTokens: 1_000_000, completionTokens: 1_000_000 } })
    const res = await visionCall(world.gw, "/api/ai/vision", { image_base64: b64(catPng) }, project.apiKey)
    expect(res.status).toBe(200)
    // gpt-4o-mini: $0.15 per million in, $0.60 per million out.
    expect((res.body as any).cost).toEqual({ providerCostUsd: 0.75, serviceChargeUsd: 0, markupPercentage: 0 })
    const rows = await usageRows(world.gw, project.secretKey)
    expect(rows[0]).toMatchObject({ kind: "vision", model: "gpt-4o-mini", provider: "openai", status: "succeeded" })
  })

  it("credits: a vision call is charged to a credit-gated project, and an empty balance answers 403 without an upstream call", async () => {
    const project = await world.gw.createProject()
    await world.gw.run(Effect.flatMap(Billing, (b) => b.configure(project.id, { creditGated: true, creditBalanceUsd: 1 })))
    world.openai.enqueue({ text: "ok", usage: { promptTokens: 1_000_000, completionTokens: 0 } })
    const paid = await visionCall(world.gw, "/api/ai/vision/describe", { image_base64: b64(catPng), max_tokens: 100 }, project.apiKey)
    expect(paid.status).toBe(200)
    const after = await world.gw.run(Effect.flatMap(Billing, (b) => b.settings(project.id)))
    expect(after.creditBalanceUsd).toBeCloseTo(1 - 0.15 * (1 + after.markupPercentage / 100), 6)

    await world.gw.run(Effect.flatMap(Billing, (b) => b.configure(project.id, { creditGated: true, creditBalanceUsd: 0 })))
    world.openai.reset()
    const refused = await visionCall(world.gw, "/api/ai/vision", { image_base64: b64(catPng) }, project.apiKey)
    expect(refused.status).toBe(403)
    expect(refused.body).toMatchObject({ error: "credit_balance_exhausted" })
    expect(world.openai.chatRequests).toHaveLength(0)
  })
})

describe("model choice", () => {
  it("without model the default vision model (gpt-4o-mini) answers", async () => {
    const res = await visionCall(world.gw, "/api/ai/vision", { image_base64: b64(catPng) })
    expect(res.body).toMatchObject({ model: "gpt-4o-mini" })
  })

  it("a catalog model without vision is upgraded to a vision model of the same provider, and the answer says so", async () => {
    const res = await visionCall(world.gw, "/api/ai/vision", { image_base64: b64(catPng), model: "gpt-3.5-turbo" })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ model: "gpt-4o-mini", provider: "openai" })
    expect(res.headers.get("x-model-upgraded-from")).toBe("gpt-3.5-turbo")
    expect((world.openai.lastRequest()!.body as any).model).toBe("gpt-4o-mini")
  })

  it("an unknown model is refused before any image is fetched", async () => {
    const before = world.images.requested.length
    const res = await visionCall(world.gw, "/api/ai/vision", { image_url: `${world.images.origin}/cat.png`, model: "no-such-model" })
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ error: "model_not_found" })
    expect(world.images.requested.length).toBe(before)
  })
})

describe("OpenAPI", () => {
  it("documents the four paths with JSON and multipart bodies and the request parameters", async () => {
    const res = await call(world.gw.baseUrl, "GET", "/openapi.json")
    const doc = res.body as any
    for (const path of ["/api/ai/vision", "/api/ai/vision/describe", "/api/ai/vision/ocr", "/api/ai/vision/classify"]) {
      const op = doc.paths[path]?.post
      expect(op, path).toBeDefined()
      expect(Object.keys(op.requestBody.content).sort()).toEqual(["application/json", "multipart/form-data"])
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(["200", "400"]))
    }
    const json = JSON.stringify(doc)
    for (const name of ["image_url", "image_base64", "mime_type", "images", "response_format", "files[]", "mimeType"]) {
      expect(json).toContain(`"${name}"`)
    }
  })
})
