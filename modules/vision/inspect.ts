/**
 * What an image really is, read from its bytes: the format from the magic numbers (`file-type`), then the
 * container walked far enough to know its pixel size, its frame count and that it is complete (a truncated
 * upload is caught here, not by the provider).
 */
import { Effect } from "effect"
import { fileTypeFromBuffer } from "file-type"

/** The universal safe formats (contract §4.7). */
export type ImageFormat = "jpeg" | "png" | "webp" | "gif"

export const MIME_OF: Readonly<Record<ImageFormat, string>> = {
  jpeg: "image/jpeg",
  png: "image/png",
  webp: "image/webp",
  gif: "image/gif"
}

export interface ImageInfo {
  readonly format: ImageFormat
  readonly mime: string
  readonly width: number
  readonly height: number
  /** More than one frame (GIF, animated WebP/PNG). */
  readonly animated: boolean
}

export type Inspection =
  | { readonly ok: true; readonly info: ImageInfo }
  | {
    readonly ok: false
    /** `unsupported`: a known non-safe format; `unknown`: not an image we recognise; `truncated`/`corrupt`: broken. */
    readonly reason: "unsupported" | "unknown" | "truncated" | "corrupt"
    /** The MIME type the bytes show, when known (e.g. `image/svg+xml`, `image/heic`). */
    readonly detected?: string | undefined
    readonly message: string
  }

const FORMAT_OF_MIME: Readonly<Record<string, ImageFormat>> = {
  "image/jpeg": "jpeg",
  "image/png": "png",
  "image/apng": "png",
  "image/webp": "webp",
  "image/gif": "gif"
}

class Broken {
  constructor(readonly reason: "truncated" | "corrupt", readonly message: string) {}
}

const truncated = (what: string) => new Broken("truncated", `the ${what} data ends early (truncated file)`)
const corrupt = (message: string) => new Broken("corrupt", message)

const u16be = (b: Uint8Array, i: number) => (b[i]! << 8) | b[i + 1]!
const u16le = (b: Uint8Array, i: number) => b[i]! | (b[i + 1]! << 8)
const u24le = (b: Uint8Array, i: number) => b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16)
const u32be = (b: Uint8Array, i: number) => ((b[i]! << 24) >>> 0) + ((b[i + 1]! << 16) | (b[i + 2]! << 8) | b[i + 3]!)
const u32le = (b: Uint8Array, i: number) => (b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16)) + ((b[i + 3]! << 24) >>> 0)
const ascii = (b: Uint8Array, i: number, n: number) => String.fromCharCode(...b.subarray(i, i + n))

/** PNG: IHDR for the size, every chunk inside the file, ending with IEND; acTL marks APNG. */
const png = (b: Uint8Array) => {
  if (b.length < 33) throw truncated("PNG")
  if (ascii(b, 12, 4) !== "IHDR") throw corrupt("the PNG does not start with an IHDR chunk")
  const width = u32be(b, 16)
  const height = u32be(b, 20)
  let animated = false
  let pos = 8
  for (;;) {
    if (pos + 12 > b.length) throw truncated("PNG")
    const length = u32be(b, pos)
    const type = ascii(b, pos + 4, 4)
    if (pos + 12 + length > b.length) throw truncated("PNG")
    if (type === "acTL") animated = true
    if (type === "IEND") break
    pos += 12 + length
  }
  return { width, height, animated }
}

/** GIF: logical screen size, then every block up to the trailer; more than one image is an animation. */
const gif = (b: Uint8Array) => {
  if (b.length < 13) throw truncated("GIF")
  const width = u16le(b, 6)
  const height = u16le(b, 8)
  const tableSize = (flags: number) => (flags & 0x80 ? 3 * 2 ** ((flags & 0x07) + 1) : 0)
  let pos = 13 + tableSize(b[10]!)
  let frames = 0
  const subBlocks = () => {
    for (;;) {
      if (pos >= b.length) throw truncated("GIF")
      const size = b[pos]!
      pos += 1 + size
      if (size === 0) return
    }
  }
  for (;;) {
    if (pos >= b.length) throw truncated("GIF")
    const introducer = b[pos]!
    if (introducer === 0x3b) break
    if (introducer === 0x21) {
      pos += 2
      subBlocks()
    } else if (introducer === 0x2c) {
      if (pos + 10 > b.length) throw truncated("GIF")
      frames++
      pos += 10 + tableSize(b[pos + 9]!) + 1 // descriptor, local colour table, LZW minimum code size
      subBlocks()
    } else {
      throw corrupt(`unexpected GIF block 0x${introducer.toString(16)}`)
    }
  }
  if (frames === 0) throw corrupt("the GIF has no image")
  return { width, height, animated: frames > 1 }
}

const SOF_MARKERS: ReadonlySet<number> = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf])

/** JPEG: marker segments (SOF for the size), entropy-coded scans, and the end-of-image marker. */
const jpeg = (b: Uint8Array) => {
  let pos = 2
  let size: { width: number; height: number } | undefined
  for (;;) {
    if (pos >= b.length) throw truncated("JPEG")
    if (b[pos] !== 0xff) throw corrupt("the JPEG has a broken marker")
    while (pos < b.length && b[pos] === 0xff) pos++ // fill bytes
    if (pos >= b.length) throw truncated("JPEG")
    const marker = b[pos]!
    pos++
    if (marker === 0xd9) break
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd8)) continue
    if (pos + 2 > b.length) throw truncated("JPEG")
    const length = u16be(b, pos)
    if (length < 2) throw corrupt("the JPEG has a broken segment length")
    if (pos + length > b.length) throw truncated("JPEG")
    if (SOF_MARKERS.has(marker)) {
      if (length < 7) throw corrupt("the JPEG frame header is too short")
      size = { height: u16be(b, pos + 3), width: u16be(b, pos + 5) }
    }
    pos += length
    if (marker === 0xda) {
      // Entropy-coded data runs to the next marker that is not a stuffed 0xFF00 or a restart marker.
      for (;;) {
        if (pos + 1 >= b.length) throw truncated("JPEG")
        if (b[pos] === 0xff && b[pos + 1] !== 0x00 && !(b[pos + 1]! >= 0xd0 && b[pos + 1]! <= 0xd7)) break
        pos++
      }
    }
  }
  if (size === undefined) throw corrupt("the JPEG has no frame header")
  return { ...size, animated: false }
}

/** WebP: the RIFF container must hold its declared size; VP8, VP8L or VP8X give the canvas size. */
const webp = (b: Uint8Array) => {
  if (b.length < 30) throw truncated("WebP")
  const end = 8 + u32le(b, 4)
  if (end > b.length) throw truncated("WebP")
  let pos = 12
  let size: { width: number; height: number; animated: boolean } | undefined
  while (pos + 8 <= end) {
    const type = ascii(b, pos, 4)
    const length = u32le(b, pos + 4)
    const data = pos + 8
    if (data + length > end) throw truncated("WebP")
    if (size === undefined) {
      if (type === "VP8X" && length >= 10) {
        size = { width: u24le(b, data + 4) + 1, height: u24le(b, data + 7) + 1, animated: (b[data]! & 0x02) !== 0 }
      } else if (type === "VP8 " && length >= 10) {
        if (b[data + 3] !== 0x9d || b[data + 4] !== 0x01 || b[data + 5] !== 0x2a) throw corrupt("the WebP VP8 frame is broken")
        size = { width: u16le(b, data + 6) & 0x3fff, height: u16le(b, data + 8) & 0x3fff, animated: false }
      } else if (type === "VP8L" && length >= 5) {
        if (b[data] !== 0x2f) throw corrupt("the WebP VP8L frame is broken")
        const bits = u32le(b, data + 1)
        size = { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1, animated: false }
      } else {
        throw corrupt(`the WebP starts with an unexpected ${type.trim()} chunk`)
      }
    }
    pos = data + length + (length % 2)
  }
  if (size === undefined) throw truncated("WebP")
  return size
}

const PARSERS: Readonly<Record<ImageFormat, (b: Uint8Array) => { width: number; height: number; animated: boolean }>> = {
  png,
  gif,
  jpeg,
  webp
}

/** SVG is text, so `file-type` does not name it; it is a common unsafe upload worth naming. */
const looksLikeSvg = (bytes: Uint8Array) => {
  const head = new TextDecoder().decode(bytes.subarray(0, 1024)).trimStart().toLowerCase()
  return head.startsWith("<svg") || (head.startsWith("<?xml") && head.includes("<svg")) || head.startsWith("<!doctype svg")
}

export const inspectImage = (bytes: Uint8Array): Effect.Effect<Inspection> =>
  Effect.promise(() => fileTypeFromBuffer(bytes).catch(() => undefined)).pipe(
    Effect.map((type): Inspection => {
      if (bytes.length === 0) return { ok: false, reason: "unknown", message: "the image is empty" }
      if ((type === undefined || type.mime.endsWith("/xml")) && looksLikeSvg(bytes)) {
        return { ok: false, reason: "unsupported", detected: "image/svg+xml", message: "SVG is not a supported image format" }
      }
      if (type === undefined) {
        return { ok: false, reason: "unknown", message: "the data is not a recognised image format" }
      }
      const format = FORMAT_OF_MIME[type.mime]
      if (format === undefined) {
        return { ok: false, reason: "unsupported", detected: type.mime, message: `${type.mime} is not a supported image format` }
      }
      try {
        const { width, height, animated } = PARSERS[format](bytes)
        if (width === 0 || height === 0) {
          return { ok: false, reason: "corrupt", detected: MIME_OF[format], message: "the image has a zero dimension" }
        }
        return { ok: true, info: { format, mime: MIME_OF[format], width, height, animated } }
      } catch (error) {
        if (error instanceof Broken) return { ok: false, reason: error.reason, detected: MIME_OF[format], message: error.message }
        return { ok: false, reason: "corrupt", detected: MIME_OF[format], message: "the image could not be read" }
      }
    })
  )
