/** OpenAI chat-completion object and error body → normalised result. */
import { Either, Predicate, Schema } from "effect"
import { generateId } from "../../crypto.ts"
import { decodeError, type ProviderErrorInfo } from "../adapter.ts"
import {
  type ChatResult,
  type FinishReason,
  optionalNullable as nullable,
  type UpstreamError,
  type UpstreamTarget,
  type Usage
} from "../types.ts"

export const OpenAIUsage = Schema.Struct({
  prompt_tokens: Schema.Number,
  completion_tokens: Schema.Number,
  prompt_tokens_details: nullable(Schema.Struct({ cached_tokens: nullable(Schema.Number) }))
})

const OpenAICompletion = Schema.Struct({
  id: nullable(Schema.String),
  model: nullable(Schema.String),
  choices: Schema.NonEmptyArray(
    Schema.Struct({
      message: Schema.Struct({
        content: nullable(Schema.String),
        refusal: nullable(Schema.String),
        tool_calls: nullable(
          Schema.Array(
            Schema.Struct({
              id: Schema.String,
              function: Schema.Struct({ name: Schema.String, arguments: nullable(Schema.String) })
            })
          )
        )
      }),
      finish_reason: nullable(Schema.String)
    })
  ),
  usage: nullable(OpenAIUsage)
})

export const toUsage = (usage: typeof OpenAIUsage.Type): Usage => ({
  promptTokens: usage.prompt_tokens,
  completionTokens: usage.completion_tokens,
  cachedTokens: usage.prompt_tokens_details?.cached_tokens ?? 0
})

export const toFinishReason = (reason: string | null | undefined): FinishReason => {
  switch (reason) {
    case "length":
      return "length"
    case "tool_calls":
    case "function_call":
      return "tool_calls"
    case "content_filter":
      return "content_filter"
    default:
      return "stop"
  }
}

const decodeCompletion = Schema.decodeUnknownEither(OpenAICompletion)

export const decodeOpenAIResult = (body: unknown, target: UpstreamTarget): Either.Either<ChatResult, UpstreamError> =>
  Either.match(decodeCompletion(body), {
    onLeft: (error) => Either.left(decodeError("openai", body, error)),
    onRight: (completion) => {
      const choice = completion.choices[0]
      const message = choice.message
      return Either.right({
        id: completion.id ?? generateId("chatcmpl"),
        model: completion.model ?? target.model,
        content: message.content ?? message.refusal ?? null,
        toolCalls: (message.tool_calls ?? []).map((call) => ({
          id: call.id,
          name: call.function.name,
          arguments: call.function.arguments ?? ""
        })),
        finishReason: toFinishReason(choice.finish_reason),
        usage: completion.usage ? toUsage(completion.usage) : { promptTokens: 0, completionTokens: 0, cachedTokens: 0 }
      })
    }
  })

/** `{"error":{"message","type","param","code"}}` */
export const readOpenAIError = (body: unknown): ProviderErrorInfo => {
  const error = Predicate.isRecord(body) ? body.error : undefined
  if (!Predicate.isRecord(error)) return {}
  const code = typeof error.code === "string" ? error.code : typeof error.type === "string" ? error.type : undefined
  return { message: typeof error.message === "string" ? error.message : undefined, code }
}
