/**
 * Per-provider image limits, from the providers' documentation (shared/reference/providers.md). They are keyed
 * by wire family: catalog vendors other than Anthropic and Google, and custom providers in OpenAI format, get
 * OpenAI's limits. Every image sent is inlined (base64), so the byte limits apply to what we send.
 */
import type { ProviderFamily } from "../../layers/providers/types.ts"
import type { ImageFormat } from "./inspect.ts"

const MiB = 1024 * 1024

export interface ImageLimits {
  /** Formats the provider accepts, among the universal safe ones. */
  readonly formats: ReadonlyArray<ImageFormat>
  /** Whether animated GIFs are accepted. */
  readonly animatedGif: boolean
  /** Largest image, in decoded bytes. */
  readonly maxImageBytes: number
  /** Largest sum of the images of one request, in decoded bytes. */
  readonly maxTotalBytes: number
  readonly maxImages: number
  /** Largest width or height in pixels; undefined when the provider documents none (it rescales). */
  readonly maxDimension?: number
  /** A tighter dimension limit once a request carries more than `manyImages.over` images. */
  readonly manyImages?: { readonly over: number; readonly maxDimension: number }
  /** Where the numbers come from, for error messages and docs. */
  readonly note: string
}

/** Anthropic measures its 5 MiB per-image limit on the base64 text: 5 MiB of base64 is 3.75 MiB of bytes. */
const ANTHROPIC_MAX_IMAGE_BYTES = (5 * MiB * 3) / 4

export const IMAGE_LIMITS: Readonly<Record<ProviderFamily, ImageLimits>> = {
  openai: {
    formats: ["jpeg", "png", "webp", "gif"],
    animatedGif: false,
    maxImageBytes: 20 * MiB,
    maxTotalBytes: 50 * MiB,
    maxImages: 500,
    note: "OpenAI: PNG, JPEG, WEBP, non-animated GIF; 20 MB per image; 500 images and 50 MB per request"
  },
  anthropic: {
    formats: ["jpeg", "png", "webp", "gif"],
    animatedGif: true,
    maxImageBytes: ANTHROPIC_MAX_IMAGE_BYTES,
    // 32 MB per request, of base64 text.
    maxTotalBytes: (32 * MiB * 3) / 4,
    maxImages: 100,
    maxDimension: 8000,
    manyImages: { over: 20, maxDimension: 2000 },
    note: "Anthropic: JPEG, PNG, GIF, WEBP; 5 MB of base64 per image; 8000×8000 px (2000×2000 over 20 images); 100 images and 32 MB per request"
  },
  google: {
    formats: ["jpeg", "png", "webp"],
    animatedGif: false,
    maxImageBytes: 100 * MiB,
    maxTotalBytes: 100 * MiB,
    maxImages: 3600,
    note: "Google Gemini: PNG, JPEG, WEBP (HEIC/HEIF are not universal safe formats; GIF is not accepted); 100 MB inline per request; 3600 images per request"
  }
}

/** The dimension limit that applies to a request of `count` images. */
export const maxDimensionFor = (limits: ImageLimits, count: number): number | undefined =>
  limits.manyImages !== undefined && count > limits.manyImages.over ? limits.manyImages.maxDimension : limits.maxDimension
