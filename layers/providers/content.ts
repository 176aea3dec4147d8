/** Helpers shared by the request mappers: message text, data URLs, finish reasons. */
import { Predicate } from "effect"
import type { ChatMessage, ContentPart, TextPart } from "./types.ts"

type AnyContent = ChatMessage["content"]

/** The text of a message's content: a string, or its text (and refusal) parts joined. */
export const contentText = (content: AnyContent): string => {
  if (content === null || content === undefined) return ""
  if (typeof content === "string") return content
  let out = ""
  for (const part of content) {
    if (part.type === "text") out += part.text
    else if (part.type === "refusal") out += part.refusal
  }
  return out
}

/** Parts of a user message (a string becomes one text part). */
export const contentParts = (content: string | ReadonlyArray<ContentPart | TextPart>): ReadonlyArray<ContentPart> =>
  typeof content === "string" ? [{ type: "text", text: content }] : content

export interface InlineData {
  readonly mediaType: string
  /** Base64, without the `data:` prefix. */
  readonly data: string
}

/** `data:image/png;base64,AAAA` → `{mediaType: "image/png", data: "AAAA"}`; undefined for other URLs. */
export const parseDataUrl = (url: string): InlineData | undefined => {
  if (!url.startsWith("data:")) return undefined
  const comma = url.indexOf(",")
  if (comma < 0) return undefined
  const meta = url.slice(5, comma).split(";")
  const mediaType = meta[0] !== undefined && meta[0].length > 0 ? meta[0].toLowerCase() : "text/plain"
  const payload = url.slice(comma + 1)
  const data = meta.includes("base64")
    ? payload
    : Buffer.from(decodeURIComponent(payload), "utf8").toString("base64")
  return { mediaType, data }
}

const MIME_BY_EXTENSION: Readonly<Record<string, string>> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  heic: "image/heic",
  heif: "image/heif"
}

/** A best guess of an image URL's type from its extension (JPEG when unknown). */
export const guessImageMime = (url: string): string => {
  const path = url.split(/[?#]/)[0] ?? ""
  const ext = path.slice(path.lastIndexOf(".") + 1).toLowerCase()
  return MIME_BY_EXTENSION[ext] ?? "image/jpeg"
}

/** Parses tool-call arguments (JSON text) into the object Anthropic and Gemini want; undefined when invalid. */
export const parseArguments = (text: string): Record<string, unknown> | undefined => {
  if (text.trim() === "") return {}
  try {
    const value: unknown = JSON.parse(text)
    return Predicate.isRecord(value) ? value : undefined
  } catch {
    return undefined
  }
}

/** Removes null and undefined fields from a body object (some OpenAI-compatible vendors reject nulls). */
export const withoutNulls = (body: Record<string, unknown>): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const key in body) {
    const value = body[key]
    if (value !== null && value !== undefined) out[key] = value
  }
  return out
}
