/**
 * The pieces of vision without a server: what the bytes of an image say (format, size, frames, completeness),
 * the preset prompts and answer fields, and the per-provider limits as data.
 */
import { Effect, Option } from "effect"
import { describe, expect, it } from "vitest"
import { inspectImage } from "../../modules/vision/inspect.ts"
import { IMAGE_LIMITS, maxDimensionFor } from "../../modules/vision/limits.ts"
import {
  answerFields,
  CLASSIFY_PROMPT,
  DESCRIBE_PROMPT,
  JSON_INSTRUCTION,
  OCR_PROMPT,
  parseJsonAnswer,
  promptFor
} from "../../modules/vision/presets.ts"
import { gif, jpeg, png, svg, truncate, webp } from "./images.ts"

const inspect = (bytes: Uint8Array) => Effect.runPromise(inspectImage(bytes))

describe("the format is read from the bytes", () => {
  it.each([
    ["PNG", png(3, 5), "image/png", 3, 5],
    ["JPEG", jpeg(17, 9), "image/jpeg", 17, 9],
    ["GIF", gif({ width: 4, height: 6 }), "image/gif", 4, 6],
    ["WebP", webp(), "image/webp", 1, 1]
  ])("a %s gives its type and pixel size", async (_name, bytes, mime, width, height) => {
    const result = await inspect(bytes)
    expect(result).toEqual({ ok: true, info: expect.objectContaining({ mime, width, height, animated: false }) })
  })

  it("padding to an exact size keeps PNG and JPEG files valid", async () => {
    const a = png(2, 2, { padTo: 10_000 })
    const b = jpeg(2, 2, { padTo: 200_003 })
    expect(a.length).toBe(10_000)
    expect(b.length).toBe(200_003)
    expect((await inspect(a)).ok).toBe(true)
    expect((await inspect(b)).ok).toBe(true)
  })

  it("a GIF with two frames is animated", async () => {
    const result = await inspect(gif({ frames: 2 }))
    expect(result).toEqual({ ok: true, info: expect.objectContaining({ format: "gif", animated: true }) })
  })

  it("dimensions come from the header, not from the pixel data", async () => {
    const result = await inspect(jpeg(8001, 16))
    expect(result).toEqual({ ok: true, info: expect.objectContaining({ width: 8001, height: 16 }) })
  })

  it("an SVG is named and refused as unsupported", async () => {
    expect(await inspect(svg())).toMatchObject({ ok: false, reason: "unsupported", detected: "image/svg+xml" })
  })

  it("a known non-safe format (BMP) is refused with its detected type", async () => {
    const bmp = Buffer.alloc(64)
    bmp.write("BM", 0, "ascii")
    bmp.writeUInt32LE(64, 2)
    bmp.writeUInt32LE(54, 10)
    bmp.writeUInt32LE(40, 14)
    expect(await inspect(bmp)).toMatchObject({ ok: false, reason: "unsupported", detected: "image/bmp" })
  })

  it("bytes of no image format are unknown", async () => {
    expect(await inspect(Buffer.from("hello, this is plain text and not an image at all"))).toMatchObject({
      ok: false,
      reason: "unknown"
    })
    expect(await inspect(new Uint8Array(0))).toMatchObject({ ok: false, reason: "unknown" })
  })

  it.each([
    ["PNG", png(4, 4)],
    ["JPEG", jpeg(16, 16)],
    ["GIF", gif()],
    ["WebP", webp()]
  ])("a truncated %s is caught", async (_name, bytes) => {
    expect(await inspect(truncate(bytes, bytes.length - 3))).toMatchObject({ ok: false, reason: "truncated" })
  })

  it("a PNG missing only its IEND chunk is truncated", async () => {
    const whole = png(2, 2)
    expect(await inspect(whole.subarray(0, whole.length - 12))).toMatchObject({ ok: false, reason: "truncated" })
  })
})

describe("presets", () => {
  it("describe, OCR and classify send their fixed prompts", () => {
    expect(promptFor("describe", { responseFormat: "text" })).toBe(DESCRIBE_PROMPT)
    expect(promptFor("ocr", { responseFormat: "text" })).toBe(OCR_PROMPT)
    expect(promptFor("classify", { responseFormat: "text" })).toBe(CLASSIFY_PROMPT)
  })

  it("analyze sends the caller's prompt, and a default without one", () => {
    expect(promptFor("analyze", { prompt: "Count the cats", responseFormat: "text" })).toBe("Count the cats")
    expect(promptFor("analyze", { responseFormat: "text" })).toMatch(/^Analyze the image/)
  })

  it("a preset appends the caller's prompt as additional instructions", () => {
    expect(promptFor("ocr", { prompt: "Only the headline", responseFormat: "text" })).toBe(
      `${OCR_PROMPT}\n\nAdditional instructions: Only the headline`
    )
  })

  it("classify lists the allowed categories", () => {
    expect(promptFor("classify", { responseFormat: "text", categories: ["cat", "dog"] })).toContain(
      'The label must be exactly one of: "cat", "dog".'
    )
  })

  it("response_format json asks for one JSON object", () => {
    expect(promptFor("analyze", { prompt: "Objects?", responseFormat: "json" })).toBe(`Objects?\n\n${JSON_INSTRUCTION}`)
  })

  it("each preset answers in its own field", () => {
    expect(answerFields("analyze", "x")).toEqual({ analysis: "x" })
    expect(answerFields("describe", "x")).toEqual({ description: "x" })
    expect(answerFields("ocr", "x")).toEqual({ text: "x" })
    expect(answerFields("classify", '{"label":"cat"}')).toEqual({ classification: { label: "cat" }, raw: '{"label":"cat"}' })
    expect(answerFields("classify", "a cat")).toEqual({ classification: null, raw: "a cat" })
  })

  it("a JSON answer inside a code fence still parses", () => {
    expect(parseJsonAnswer('```json\n{"label": "dog"}\n```')).toEqual(Option.some({ label: "dog" }))
    expect(parseJsonAnswer("{label: dog}")).toEqual(Option.none())
  })
})

describe("per-provider limits", () => {
  it("Anthropic's 5 MB is of base64 text: 3.75 MiB of image bytes", () => {
    expect(IMAGE_LIMITS.anthropic.maxImageBytes).toBe(3_932_160)
    expect(Math.ceil(IMAGE_LIMITS.anthropic.maxImageBytes / 3) * 4).toBe(5 * 1024 * 1024)
  })

  it("Anthropic's dimension limit tightens to 2000 px over 20 images", () => {
    expect(maxDimensionFor(IMAGE_LIMITS.anthropic, 20)).toBe(8000)
    expect(maxDimensionFor(IMAGE_LIMITS.anthropic, 21)).toBe(2000)
    expect(maxDimensionFor(IMAGE_LIMITS.openai, 21)).toBeUndefined()
  })

  it("Google does not take GIF; OpenAI takes GIF but not animated", () => {
    expect(IMAGE_LIMITS.google.formats).not.toContain("gif")
    expect(IMAGE_LIMITS.openai.formats).toContain("gif")
    expect(IMAGE_LIMITS.openai.animatedGif).toBe(false)
  })
})
