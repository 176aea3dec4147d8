/**
 * Test images built byte by byte, so each limit can be hit exactly: real PNGs (zlib-compressed grey pixels), real
 * baseline JPEGs (grey, every block a zero DC difference and an end-of-block, with one-code Huffman tables),
 * GIFs (one or two frames), a 1×1 lossless WebP, an SVG. `padTo` grows a file to an exact byte size with an
 * ancillary chunk (PNG) or comment segments (JPEG) that decoders skip.
 */
import * as Zlib from "node:zlib"

const CRC_TABLE = (() => {
  const table = new Uint32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    table[n] = c >>> 0
  }
  return table
})()

const crc32 = (bytes: Uint8Array) => {
  let c = 0xffffffff
  for (const byte of bytes) c = CRC_TABLE[(c ^ byte) & 0xff]! ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}

const u32 = (n: number) => {
  const b = Buffer.alloc(4)
  b.writeUInt32BE(n >>> 0)
  return b
}

const pngChunk = (type: string, data: Uint8Array) => {
  const typed = Buffer.concat([Buffer.from(type, "ascii"), data])
  return Buffer.concat([u32(data.length), typed, u32(crc32(typed))])
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

/** A grey RGB PNG of `width`×`height`; `padTo` makes the file exactly that many bytes. */
export const png = (width = 2, height = 2, options: { padTo?: number } = {}): Buffer => {
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(width, 0)
  ihdr.writeUInt32BE(height, 4)
  ihdr[8] = 8 // bit depth
  ihdr[9] = 2 // RGB
  const row = Buffer.alloc(1 + width * 3, 0x80)
  row[0] = 0 // filter: none
  const raw = Buffer.concat(Array.from({ length: height }, () => row))
  const head = Buffer.concat([PNG_SIGNATURE, pngChunk("IHDR", ihdr), pngChunk("IDAT", Zlib.deflateSync(raw))])
  const tail = pngChunk("IEND", new Uint8Array(0))
  if (options.padTo === undefined) return Buffer.concat([head, tail])
  const padding = options.padTo - head.length - tail.length - 12
  if (padding < 0) throw new Error(`a ${width}×${height} PNG is larger than ${options.padTo} bytes`)
  return Buffer.concat([head, pngChunk("paDd", Buffer.alloc(padding, 0x61)), tail])
}

const segment = (marker: number, data: Uint8Array) => {
  const head = Buffer.from([0xff, marker, 0, 0])
  head.writeUInt16BE(data.length + 2, 2)
  return Buffer.concat([head, data])
}

/** A grey baseline JPEG of `width`×`height`; `padTo` makes the file exactly that many bytes. */
export const jpeg = (width = 2, height = 2, options: { padTo?: number } = {}): Buffer => {
  const app0 = segment(0xe0, Buffer.from([0x4a, 0x46, 0x49, 0x46, 0x00, 1, 1, 0, 0, 1, 0, 1, 0, 0]))
  const dqt = segment(0xdb, Buffer.concat([Buffer.from([0x00]), Buffer.alloc(64, 1)]))
  const sof = Buffer.alloc(9)
  sof[0] = 8
  sof.writeUInt16BE(height, 1)
  sof.writeUInt16BE(width, 3)
  sof[5] = 1 // one component
  sof[6] = 1 // id
  sof[7] = 0x11 // sampling
  sof[8] = 0 // quantisation table
  const sof0 = segment(0xc0, sof)
  // One code of length 1 in each table: DC category 0, AC end-of-block.
  const oneCode = (tableClassAndId: number) =>
    Buffer.concat([Buffer.from([tableClassAndId, 1]), Buffer.alloc(15, 0), Buffer.from([0x00])])
  const dht = segment(0xc4, Buffer.concat([oneCode(0x00), oneCode(0x10)]))
  const sos = segment(0xda, Buffer.from([1, 1, 0x00, 0, 63, 0]))
  const blocks = Math.ceil(width / 8) * Math.ceil(height / 8)
  const bits = blocks * 2 // "0" (DC diff 0) + "0" (EOB) per block
  const scan = Buffer.alloc(Math.ceil(bits / 8), 0)
  if (bits % 8 !== 0) scan[scan.length - 1] = (1 << (8 - (bits % 8))) - 1 // pad with one bits
  const soi = Buffer.from([0xff, 0xd8])
  const eoi = Buffer.from([0xff, 0xd9])
  const body = [app0, dqt, sof0, dht, sos, scan]
  if (options.padTo === undefined) return Buffer.concat([soi, ...body, eoi])
  let missing: number = options.padTo - Buffer.concat([soi, ...body, eoi]).length
  if (missing < 0) throw new Error(`a ${width}×${height} JPEG is larger than ${options.padTo} bytes`)
  const comments: Array<Buffer> = []
  while (missing > 0) {
    // A comment segment costs 4 bytes plus 0..65533 of text.
    let take = Math.min(missing, 65_537)
    if (missing - take > 0 && missing - take < 4) take -= 4
    if (take < 4) throw new Error("cannot pad a JPEG by fewer than 4 bytes; choose another size")
    comments.push(segment(0xfe, Buffer.alloc(take - 4, 0x20)))
    missing -= take
  }
  return Buffer.concat([soi, app0, ...comments, dqt, sof0, dht, sos, scan, eoi])
}

/** A GIF89a of `width`×`height`; two frames (with a looping extension) make it animated. */
export const gif = (options: { width?: number; height?: number; frames?: number } = {}): Buffer => {
  const width = options.width ?? 1
  const height = options.height ?? 1
  const screen = Buffer.alloc(7)
  screen.writeUInt16LE(width, 0)
  screen.writeUInt16LE(height, 2)
  screen[4] = 0x80 // global colour table of 2 entries
  const palette = Buffer.from([0, 0, 0, 255, 255, 255])
  const loop = Buffer.from([0x21, 0xff, 0x0b, ...Buffer.from("NETSCAPE2.0"), 0x03, 0x01, 0x00, 0x00, 0x00])
  const frame = () => {
    const descriptor = Buffer.alloc(10)
    descriptor[0] = 0x2c
    descriptor.writeUInt16LE(width, 5)
    descriptor.writeUInt16LE(height, 7)
    // LZW minimum code size 2; one sub-block: clear, index 0, end-of-information; the block terminator.
    return Buffer.concat([descriptor, Buffer.from([0x02, 0x02, 0x44, 0x01, 0x00])])
  }
  const frames = options.frames ?? 1
  return Buffer.concat([
    Buffer.from("GIF89a", "ascii"),
    screen,
    palette,
    ...(frames > 1 ? [loop] : []),
    ...Array.from({ length: frames }, frame),
    Buffer.from([0x3b])
  ])
}

/** A 1×1 lossless WebP. */
export const webp = (): Buffer => Buffer.from("UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==", "base64")

export const svg = (): Buffer =>
  Buffer.from('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>')

/** The first `keep` bytes of `bytes` (default: all but the last 20), as an interrupted upload would leave them. */
export const truncate = (bytes: Buffer, keep = bytes.length - 20): Buffer => bytes.subarray(0, keep)

export const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64")
export const dataUrl = (mime: string, bytes: Uint8Array) => `data:${mime};base64,${b64(bytes)}`
