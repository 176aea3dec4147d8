/** Anthropic message and error body → normalised result. */
import { Either, Predicate, Schema } from "effect"
import { decodeError, type ProviderErrorInfo } from "../adapter.ts"
import { type ChatResult, type FinishReason, optionalNullable as nullable, type UpstreamError, type UpstreamTarget, type Usage } from "../types.ts"

export const AnthropicUsage = Schema.Struct({
  input_tokens: nullable(Schema.Number),
  output_tokens: nullable(Schema.Number),
  cache_read_input_tokens: nullable(Schema.Number),
  cache_creation_input_tokens: nullable(Schema.Number)
})
export type AnthropicUsage = typeof AnthropicUsage.Type

const ContentBlock = Schema.Struct({
  type: Schema.String,
  text: Schema.optional(Schema.String),
  id: Schema.optional(Schema.String),
  name: Schema.optional(Schema.String),
  input: Schema.optional(Schema.Unknown)
})

const AnthropicMessage = Schema.Struct({
  id: Schema.String,
  model: nullable(Schema.String),
  content: Schema.Array(ContentBlock),
  stop_reason: nullable(Schema.String),
  usage: nullable(AnthropicUsage)
})

/** Anthropic's `input_tokens` excludes cache reads and writes; OpenAI's `prompt_tokens` includes them. */
export const toUsage = (usage: AnthropicUsage): Usage => {
  const cached = usage.cache_read_input_tokens ?? 0
  return {
    promptTokens: (usage.input_tokens ?? 0) + cached + (usage.cache_creation_input_tokens ?? 0),
    completionTokens: usage.output_tokens ?? 0,
    cachedTokens: cached
  }
}

export const toFinishReason = (reason: string | null | undefined): FinishReason => {
  switch (reason) {
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length"
    case "tool_use":
      return "tool_calls"
    case "refusal":
      return "content_filter"
    default:
      return "stop"
  }
}

const decodeMessage = Schema.decodeUnknownEither(AnthropicMessage)

export const decodeAnthropicResult = (body: unknown, target: UpstreamTarget): Either.Either<ChatResult, UpstreamError> =>
  Either.match(decodeMessage(body), {
    onLeft: (error) => Either.left(decodeError("anthropic", body, error)),
    onRight: (message) => {
      let text: string | null = null
      const toolCalls: Array<ChatResult["toolCalls"][number]> = []
      for (const block of message.content) {
        if (block.type === "text" && block.text !== undefined) text = (text ?? "") + block.text
        else if (block.type === "tool_use" && block.id !== undefined && block.name !== undefined) {
          toolCalls.push({ id: block.id, name: block.name, arguments: JSON.stringify(block.input ?? {}) })
        }
      }
      return Either.right({
        id: message.id,
        model: message.model ?? target.model,
        content: text,
        toolCalls,
        finishReason: toFinishReason(message.stop_reason),
        usage: toUsage(message.usage ?? {})
      })
    }
  })

/** `{"type":"error","error":{"type","message"},"request_id"}` */
export const readAnthropicError = (body: unknown): ProviderErrorInfo => {
  const error = Predicate.isRecord(body) ? body.error : undefined
  if (!Predicate.isRecord(error)) return {}
  return {
    message: typeof error.message === "string" ? error.message : undefined,
    code: typeof error.type === "string" ? error.type : undefined
  }
}

/** The HTTP status Anthropic uses for an error type (for `error` events inside a stream). */
export const statusOfErrorType = (type: string | undefined): number => {
  switch (type) {
    case "invalid_request_error":
      return 400
    case "authentication_error":
      return 401
    case "billing_error":
      return 402
    case "permission_error":
      return 403
    case "not_found_error":
      return 404
    case "request_too_large":
      return 413
    case "rate_limit_error":
      return 429
    case "timeout_error":
      return 504
    case "overloaded_error":
      return 529
    default:
      return 500
  }
}
