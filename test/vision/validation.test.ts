/**
 * Validation before the provider call (contract §4.7, §7.4): the format comes from the bytes, the universal safe
 * formats are JPEG, PNG, WEBP and GIF, each provider's limits hold per image at their edges, and every violation
 * is a 400 `unsupported_format` or `image_too_large` naming the offending image — with no upstream call made.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { IMAGE_LIMITS } from "../../modules/vision/limits.ts"
import { b64, gif, jpeg, png, svg, truncate } from "./images.ts"
import { multipartCall, sentImages, startVisionWorld, visionCall, type VisionWorld } from "./helpers.ts"

let world: VisionWorld
const ok = png(2, 2)
const MiB = 1024 * 1024

beforeAll(async () => {
  world = await startVisionWorld()
})
afterAll(async () => {
  await world?.close()
})
beforeEach(() => {
  world.openai.reset()
  world.anthropic.reset()
  world.google.reset()
})

const noUpstreamCall = () => {
  expect(world.openai.chatRequests).toHaveLength(0)
  expect(world.anthropic.chatRequests).toHaveLength(0)
  expect(world.google.chatRequests).toHaveLength(0)
}

const ANTHROPIC = "claude-3-5-haiku-20241022"
const GOOGLE = "gemini-2.0-flash"

describe("the real format is read from the bytes", () => {
  it("a PNG labelled as JPEG (mime_type) is refused, naming the image", async () => {
    const res = await visionCall(world.gw, "/api/ai/vision", { image_base64: b64(ok), mime_type: "image/jpeg" })
    expect(res.status).toBe(400)
    expect(res.body).toEqual({
      error: "unsupported_format",
      message: "Image 0: it is labelled image/jpeg but its bytes are image/png",
      request_id: expect.any(String),
      param: "image_base64",
      image_index: 0,
      provider: "openai",
      reason: "label_mismatch",
      declared_format: "image/jpeg",
      detected_format: "image/png"
    })
    noUpstreamCall()
  })

  it("a PNG uploaded as photo.jpg with type image/jpeg is refused, naming the file and its index", async () => {
    const res = await multipartCall(world.gw, "/api/ai/vision", [
      ["file", "fine.png", "image/png", ok],
      ["file", "photo.jpg", "image/jpeg", png(3, 3)]
    ])
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({
      error: "unsupported_format",
      image_index: 1,
      file_name: "photo.jpg",
      param: "file",
      reason: "label_mismatch",
      message: expect.stringContaining("Image 1 (photo.jpg)")
    })
    noUpstreamCall()
  })

  it("the SDK label mimeType is checked the same way, in images[]", async () => {
    const res = await visionCall(world.gw, "/api/ai/vision", {
      images: [{ base64: b64(ok), mimeType: "image/png" }, { base64: b64(jpeg(8, 8)), mimeType: "image/webp" }]
    })
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ error: "unsupported_format", image_index: 1, param: "images[1]", detected_format: "image/jpeg" })
  })

  it("aliases of a label are the same type (image/jpg is image/jpeg)", async () => {
    const res = await visionCall(world.gw, "/api/ai/vision", { image_base64: b64(jpeg(8, 8)), mime_type: "image/jpg" })
    expect(res.status).toBe(200)
  })

  it("a truncated file is refused, naming it", async () => {
    const res = await visionCall(world.gw, "/api/ai/vision", {
      images: [{ base64: b64(ok) }, { base64: b64(truncate(jpeg(64, 64))) }]
    })
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({
      error: "unsupported_format",
      image_index: 1,
      param: "images[1]",
      reason: "truncated",
      detected_format: "image/jpeg"
    })
    noUpstreamCall()
  })

  it("a truncated multipart upload is refused with its file name", async () => {
    const res = await multipartCall(world.gw, "/api/ai/vision/describe", [["file", "cut.png", "image/png", truncate(png(10, 10))]])
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ error: "unsupported_format", image_index: 0, file_name: "cut.png", reason: "truncated" })
  })

  it("an SVG is refused as unsupported, whatever its label", async () => {
    const res = await multipartCall(world.gw, "/api/ai/vision", [
      ["file", "a.png", "image/png", ok],
      ["file", "b.png", "image/png", ok],
      ["file", "logo.svg", "image/svg+xml", svg()]
    ])
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({
      error: "unsupported_format",
      image_index: 2,
      file_name: "logo.svg",
      reason: "unsupported",
      detected_format: "image/svg+xml"
    })
    noUpstreamCall()
  })

  it("bytes that are no image are refused; invalid base64 is named too", async () => {
    const text = await visionCall(world.gw, "/api/ai/vision", { image_base64: b64(Buffer.from("just some text, no picture")) })
    expect(text.body).toMatchObject({ error: "unsupported_format", image_index: 0, reason: "unknown" })
    const garbage = await visionCall(world.gw, "/api/ai/vision", { image: { base64: "%%% not base64 %%%" } })
    expect(garbage.status).toBe(400)
    expect(garbage.body).toMatchObject({ error: "invalid_image", image_index: 0, param: "image" })
  })

  it("a URL image that is not an image is refused after fetching, before the provider call", async () => {
    world.images.put("/page.html", Buffer.from("<html><body>hi</body></html>"), "image/png")
    const res = await visionCall(world.gw, "/api/ai/vision", { image_url: `${world.images.origin}/page.html` })
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ error: "unsupported_format", image_index: 0, param: "image_url" })
    noUpstreamCall()
  })

  it("an image URL on a private network is refused by the safe fetcher", async () => {
    const res = await visionCall(world.gw, "/api/ai/vision", {
      images: [{ base64: b64(ok) }, { url: "http://169.254.169.254/latest/meta-data/iam/" }]
    })
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ error: "unsafe_url", image_index: 1, param: "images[1]" })
    noUpstreamCall()
  })
})

describe("per-provider formats", () => {
  it("Google does not take GIF", async () => {
    const res = await visionCall(world.gw, "/api/ai/vision", { image_base64: b64(gif()), model: GOOGLE })
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ error: "unsupported_format", provider: "google", reason: "provider_format", detected_format: "image/gif" })
    noUpstreamCall()
  })

  it("OpenAI refuses an animated GIF; Anthropic takes it", async () => {
    const animated = b64(gif({ frames: 2 }))
    const openai = await visionCall(world.gw, "/api/ai/vision", { image_base64: animated })
    expect(openai.status).toBe(400)
    expect(openai.body).toMatchObject({ error: "unsupported_format", provider: "openai", reason: "animated_gif" })
    const anthropic = await visionCall(world.gw, "/api/ai/vision", { image_base64: animated, model: ANTHROPIC })
    expect(anthropic.status).toBe(200)
    expect(sentImages(world.anthropic.lastRequest())).toEqual([{ mime: "image/gif", data: animated }])
  })
})

describe("per-provider sizes, at their edges", () => {
  it("Anthropic: 3,932,160 bytes (5 MiB of base64) pass, one byte more is image_too_large", async () => {
    const max = IMAGE_LIMITS.anthropic.maxImageBytes
    const atLimit = await visionCall(world.gw, "/api/ai/vision", { image_base64: b64(png(2, 2, { padTo: max })), model: ANTHROPIC })
    expect(atLimit.status).toBe(200)
    const sent = sentImages(world.anthropic.lastRequest())[0]!
    expect(sent.data.length).toBe(5 * MiB)
    const over = await visionCall(world.gw, "/api/ai/vision", {
      images: [{ base64: b64(ok) }, { base64: b64(png(2, 2, { padTo: max + 1 })) }],
      model: ANTHROPIC
    })
    expect(over.status).toBe(400)
    expect(over.body).toMatchObject({
      error: "image_too_large",
      image_index: 1,
      param: "images[1]",
      provider: "anthropic",
      reason: "bytes",
      bytes: max + 1,
      max_bytes: max
    })
    expect(world.anthropic.chatRequests).toHaveLength(1)
  })

  it("Anthropic: 8000 px pass, 8001 px is image_too_large", async () => {
    const atLimit = await visionCall(world.gw, "/api/ai/vision", { image_base64: b64(jpeg(8000, 8)), model: ANTHROPIC })
    expect(atLimit.status).toBe(200)
    const over = await multipartCall(world.gw, "/api/ai/vision", [["file", "tall.jpg", "image/jpeg", jpeg(8, 8001)]], { model: ANTHROPIC })
    expect(over.status).toBe(400)
    expect(over.body).toMatchObject({
      error: "image_too_large",
      file_name: "tall.jpg",
      reason: "dimensions",
      width: 8,
      height: 8001,
      max_dimension: 8000
    })
  })

  it("Anthropic: over 20 images the limit is 2000 px", async () => {
    const images = (edge: number) => Array.from({ length: 21 }, (_, i) => ({ base64: b64(i === 20 ? jpeg(edge, 8) : ok) }))
    const atLimit = await visionCall(world.gw, "/api/ai/vision", { images: images(2000), model: ANTHROPIC })
    expect(atLimit.status).toBe(200)
    const over = await visionCall(world.gw, "/api/ai/vision", { images: images(2001), model: ANTHROPIC })
    expect(over.status).toBe(400)
    expect(over.body).toMatchObject({ error: "image_too_large", image_index: 20, reason: "dimensions", max_dimension: 2000 })
    // The same image alone is fine: 2001 px is under the single-image limit.
    const alone = await visionCall(world.gw, "/api/ai/vision", { image_base64: b64(jpeg(2001, 8)), model: ANTHROPIC })
    expect(alone.status).toBe(200)
  })

  it("Anthropic: 100 images pass, the 101st is named", async () => {
    const images = (count: number) => Array.from({ length: count }, () => ({ base64: b64(ok) }))
    expect((await visionCall(world.gw, "/api/ai/vision", { images: images(100), model: ANTHROPIC })).status).toBe(200)
    const over = await visionCall(world.gw, "/api/ai/vision", { images: images(101), model: ANTHROPIC })
    expect(over.status).toBe(400)
    expect(over.body).toMatchObject({ error: "image_too_large", image_index: 100, reason: "too_many_images", max_images: 100 })
  })

  it("OpenAI: 20 MiB pass, one byte more is image_too_large (inline, and by URL where the fetch is cut)", async () => {
    const max = IMAGE_LIMITS.openai.maxImageBytes
    expect(max).toBe(20 * MiB)
    const atLimit = await visionCall(world.gw, "/api/ai/vision", { image_base64: b64(jpeg(16, 16, { padTo: max })) })
    expect(atLimit.status).toBe(200)
    const inline = await visionCall(world.gw, "/api/ai/vision", { image_base64: b64(jpeg(16, 16, { padTo: max + 1 })) })
    expect(inline.status).toBe(400)
    expect(inline.body).toMatchObject({ error: "image_too_large", image_index: 0, provider: "openai", bytes: max + 1, max_bytes: max })
    world.images.putStream("/huge-openai.png", png(2, 2), max + 1)
    const byUrl = await visionCall(world.gw, "/api/ai/vision", { image: { url: `${world.images.origin}/huge-openai.png` } })
    expect(byUrl.status).toBe(400)
    expect(byUrl.body).toMatchObject({ error: "image_too_large", image_index: 0, param: "image", reason: "bytes", max_bytes: max })
    expect(world.openai.chatRequests).toHaveLength(1)
  })

  it("OpenAI: images adding up to more than 50 MiB name the image that crosses the line", async () => {
    world.images.put("/twenty.jpg", jpeg(16, 16, { padTo: 20 * MiB }), "image/jpeg")
    const url = `${world.images.origin}/twenty.jpg`
    const res = await visionCall(world.gw, "/api/ai/vision", { images: [{ url }, { url }, { url }] })
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ error: "image_too_large", image_index: 2, reason: "request_total", max_total_bytes: 50 * MiB })
    noUpstreamCall()
  })

  it("Google: an image over 100 MiB is image_too_large (the fetch stops at the cap)", async () => {
    const max = IMAGE_LIMITS.google.maxImageBytes
    world.images.putStream("/huge-google.png", png(2, 2), max + 1)
    const res = await visionCall(world.gw, "/api/ai/vision/describe", { image_url: `${world.images.origin}/huge-google.png`, model: GOOGLE })
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ error: "image_too_large", image_index: 0, provider: "google", reason: "bytes", max_bytes: 100 * MiB })
    noUpstreamCall()
  })

  it("the same 5 MB image is too large for Anthropic but fine for OpenAI and Google", async () => {
    const five = b64(png(2, 2, { padTo: 5 * 1000 * 1000 }))
    expect((await visionCall(world.gw, "/api/ai/vision", { image_base64: five, model: ANTHROPIC })).body).toMatchObject({
      error: "image_too_large",
      provider: "anthropic"
    })
    expect((await visionCall(world.gw, "/api/ai/vision", { image_base64: five })).status).toBe(200)
    expect((await visionCall(world.gw, "/api/ai/vision", { image_base64: five, model: GOOGLE })).status).toBe(200)
  })
})
