/**
 * The four vision operations: analyze (the caller's prompt) and the presets describe, OCR and classify, each
 * with a fixed prompt and its own answer field (contract §4.7).
 */
import { Option } from "effect"

export type Preset = "analyze" | "describe" | "ocr" | "classify"

export const PRESET_PATHS = {
  analyze: "/api/ai/vision",
  describe: "/api/ai/vision/describe",
  ocr: "/api/ai/vision/ocr",
  classify: "/api/ai/vision/classify"
} as const satisfies Record<Preset, `/${string}`>

export const ANALYZE_DEFAULT_PROMPT =
  "Analyze the image(s) in detail: the subject and setting, notable objects and people, any visible text, and anything unusual."

export const DESCRIBE_PROMPT =
  "Describe the image(s) clearly and concisely: the main subject, the setting, notable details and colours, and any visible text. Answer with the description only."

export const OCR_PROMPT =
  "Transcribe all text visible in the image(s) exactly as written, in reading order, keeping line breaks. Answer with the transcribed text only, without commentary. If there is no text, answer with nothing."

export const CLASSIFY_PROMPT =
  "Classify the image(s). Answer with only one JSON object, without prose or code fences, of the form " +
  '{"label": string, "confidence": number between 0 and 1, "tags": array of strings}.'

export const JSON_INSTRUCTION = "Answer with a single JSON object only, without prose or code fences."

/** The prompt sent for `preset`, with the caller's extra instructions and classify categories. */
export const promptFor = (
  preset: Preset,
  options: {
    readonly prompt?: string | undefined
    readonly responseFormat: "json" | "text"
    readonly categories?: ReadonlyArray<string> | undefined
  }
): string => {
  const extra = options.prompt?.trim()
  const parts: Array<string> = []
  switch (preset) {
    case "analyze":
      parts.push(extra && extra.length > 0 ? extra : ANALYZE_DEFAULT_PROMPT)
      break
    case "describe":
      parts.push(DESCRIBE_PROMPT)
      break
    case "ocr":
      parts.push(OCR_PROMPT)
      break
    case "classify":
      parts.push(CLASSIFY_PROMPT)
      if (options.categories !== undefined && options.categories.length > 0) {
        parts.push(`The label must be exactly one of: ${options.categories.map((c) => JSON.stringify(c)).join(", ")}.`)
      }
      break
  }
  if (preset !== "analyze" && extra && extra.length > 0) parts.push(`Additional instructions: ${extra}`)
  if (wantsJson(preset, options.responseFormat) && preset !== "classify") parts.push(JSON_INSTRUCTION)
  return parts.join("\n\n")
}

/** Whether the call asks the provider for structured (JSON) output. */
export const wantsJson = (preset: Preset, responseFormat: "json" | "text") => preset === "classify" || responseFormat === "json"

/** The model's answer as JSON when it is valid JSON (a ```json fence around it is tolerated). */
export const parseJsonAnswer = (raw: string): Option.Option<unknown> => {
  const text = raw.trim()
  const fenced = /^```(?:json)?\s*([\s\S]*?)\s*```$/i.exec(text)
  try {
    return Option.some(JSON.parse(fenced ? fenced[1]! : text))
  } catch {
    return Option.none()
  }
}

/** The answer fields of a preset: `{analysis}`, `{description}`, `{text}` or `{classification, raw}`. */
export const answerFields = (preset: Preset, text: string): Record<string, unknown> => {
  switch (preset) {
    case "analyze":
      return { analysis: text }
    case "describe":
      return { description: text }
    case "ocr":
      return { text }
    case "classify":
      return { classification: Option.getOrNull(parseJsonAnswer(text)), raw: text }
  }
}
