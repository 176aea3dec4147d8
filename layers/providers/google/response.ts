/** Gemini `GenerateContentResponse` and error body → normalised result. */
import { Either, Predicate, Schema } from "effect"
import { generateId } from "../../crypto.ts"
import { decodeError, type ProviderErrorInfo } from "../adapter.ts"
import { type ChatResult, type FinishReason, optionalNullable as nullable, type UpstreamError, type UpstreamTarget, type Usage } from "../types.ts"

export const GoogleUsage = Schema.Struct({
  promptTokenCount: nullable(Schema.Number),
  candidatesTokenCount: nullable(Schema.Number),
  cachedContentTokenCount: nullable(Schema.Number),
  thoughtsTokenCount: nullable(Schema.Number)
})

const Part = Schema.Struct({
  text: nullable(Schema.String),
  thought: nullable(Schema.Boolean),
  functionCall: nullable(
    Schema.Struct({ name: Schema.String, args: nullable(Schema.Unknown), id: nullable(Schema.String) })
  )
})

export const GoogleResponse = Schema.Struct({
  candidates: nullable(
    Schema.Array(
      Schema.Struct({
        content: nullable(Schema.Struct({ parts: nullable(Schema.Array(Part)) })),
        finishReason: nullable(Schema.String)
      })
    )
  ),
  promptFeedback: nullable(Schema.Struct({ blockReason: nullable(Schema.String) })),
  usageMetadata: nullable(GoogleUsage),
  modelVersion: nullable(Schema.String),
  responseId: nullable(Schema.String)
})
export type GoogleResponse = typeof GoogleResponse.Type
export type GooglePart = typeof Part.Type

/** Thinking tokens are billed as output, so they count as completion tokens. */
export const toUsage = (usage: typeof GoogleUsage.Type): Usage => ({
  promptTokens: usage.promptTokenCount ?? 0,
  completionTokens: (usage.candidatesTokenCount ?? 0) + (usage.thoughtsTokenCount ?? 0),
  cachedTokens: usage.cachedContentTokenCount ?? 0
})

/** Gemini says STOP after function calls too; OpenAI says tool_calls. */
export const toFinishReason = (reason: string, hasToolCalls: boolean): FinishReason => {
  switch (reason) {
    case "MAX_TOKENS":
      return "length"
    case "SAFETY":
    case "RECITATION":
    case "BLOCKLIST":
    case "PROHIBITED_CONTENT":
    case "SPII":
    case "IMAGE_SAFETY":
      return "content_filter"
    default:
      return hasToolCalls ? "tool_calls" : "stop"
  }
}

/** The visible text of a part (thought summaries are left out). */
export const partText = (part: GooglePart): string | undefined =>
  part.thought === true ? undefined : part.text ?? undefined

export const toToolCall = (call: NonNullable<GooglePart["functionCall"]>) => ({
  id: call.id ?? generateId("call"),
  name: call.name,
  arguments: JSON.stringify(call.args ?? {})
})

export const decodeGoogleResponse = Schema.decodeUnknownEither(GoogleResponse)

export const decodeGoogleResult = (body: unknown, target: UpstreamTarget): Either.Either<ChatResult, UpstreamError> =>
  Either.match(decodeGoogleResponse(body), {
    onLeft: (error) => Either.left(decodeError("google", body, error)),
    onRight: (response) => {
      const candidate = response.candidates?.[0]
      let text: string | null = null
      const toolCalls: Array<ChatResult["toolCalls"][number]> = []
      for (const part of candidate?.content?.parts ?? []) {
        const piece = partText(part)
        if (piece !== undefined) text = (text ?? "") + piece
        if (part.functionCall) toolCalls.push(toToolCall(part.functionCall))
      }
      const finishReason = candidate === undefined
        ? (response.promptFeedback?.blockReason ? "content_filter" : "stop")
        : toFinishReason(candidate.finishReason ?? "STOP", toolCalls.length > 0)
      return Either.right({
        id: response.responseId ?? generateId("chatcmpl"),
        model: response.modelVersion ?? target.model,
        content: text,
        toolCalls,
        finishReason,
        usage: toUsage(response.usageMetadata ?? {})
      })
    }
  })

/** `"30s"`, `"1.5s"` → milliseconds. */
const parseDelay = (value: unknown): number | undefined => {
  if (typeof value !== "string") return undefined
  const match = /^(\d+(?:\.\d+)?)s$/.exec(value.trim())
  return match?.[1] !== undefined ? Math.ceil(Number(match[1]) * 1000) : undefined
}

/** `{"error":{"code","message","status","details"}}` (sometimes wrapped in an array). */
export const readGoogleError = (body: unknown): ProviderErrorInfo => {
  const root = Array.isArray(body) ? body[0] : body
  const error = Predicate.isRecord(root) ? root.error : undefined
  if (!Predicate.isRecord(error)) return {}
  let retryAfterMs: number | undefined
  if (Array.isArray(error.details)) {
    for (const detail of error.details) {
      if (Predicate.isRecord(detail) && String(detail["@type"]).endsWith("RetryInfo")) {
        retryAfterMs = parseDelay(detail.retryDelay)
      }
    }
  }
  return {
    message: typeof error.message === "string" ? error.message : undefined,
    code: typeof error.status === "string" ? error.status : undefined,
    retryAfterMs
  }
}
