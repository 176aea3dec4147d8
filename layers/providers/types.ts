/**
 * Normalised chat types shared by every provider adapter: the OpenAI chat-completions body we accept
 * (`ChatRequest`), the deltas a stream yields (`ChatDelta`), a whole answer (`ChatResult`), where a call goes
 * (`UpstreamTarget`) and what can go wrong (`UpstreamError`).
 */
import { Data, Schema } from "effect"
import type { Option, Redacted } from "effect"

// ---------------------------------------------------------------------------------------------------------------
// Request: the OpenAI chat-completions body. Unknown fields are accepted and dropped on decode.
// ---------------------------------------------------------------------------------------------------------------

/** An optional field that also accepts `null` (the OpenAI SDK sends `null` for "not set"). */
export const optionalNullable = <S extends Schema.Schema.Any>(schema: S) => Schema.optional(Schema.NullOr(schema))

export const TextPart = Schema.Struct({ type: Schema.Literal("text"), text: Schema.String })
export type TextPart = typeof TextPart.Type

export const ImagePart = Schema.Struct({
  type: Schema.Literal("image_url"),
  image_url: Schema.Struct({
    /** `https://…` or a `data:image/png;base64,…` URL. */
    url: Schema.String,
    detail: Schema.optional(Schema.Literal("auto", "low", "high"))
  })
})
export type ImagePart = typeof ImagePart.Type

/** An assistant refusal replayed in history; adapters treat it as text. */
export const RefusalPart = Schema.Struct({ type: Schema.Literal("refusal"), refusal: Schema.String })

export const ContentPart = Schema.Union(TextPart, ImagePart)
export type ContentPart = typeof ContentPart.Type

export const ToolCall = Schema.Struct({
  id: Schema.String,
  type: Schema.optionalWith(Schema.Literal("function"), { default: () => "function" as const }),
  function: Schema.Struct({
    name: Schema.String,
    /** JSON text of the arguments, as the model produced it. */
    arguments: Schema.String
  })
})
export type ToolCall = typeof ToolCall.Type

export const SystemMessage = Schema.Struct({
  role: Schema.Literal("system", "developer"),
  content: Schema.Union(Schema.String, Schema.Array(TextPart)),
  name: Schema.optional(Schema.String)
})

export const UserMessage = Schema.Struct({
  role: Schema.Literal("user"),
  content: Schema.Union(Schema.String, Schema.Array(ContentPart)),
  name: Schema.optional(Schema.String)
})

export const AssistantMessage = Schema.Struct({
  role: Schema.Literal("assistant"),
  content: optionalNullable(Schema.Union(Schema.String, Schema.Array(Schema.Union(TextPart, RefusalPart)))),
  tool_calls: optionalNullable(Schema.Array(ToolCall)),
  refusal: optionalNullable(Schema.String),
  name: Schema.optional(Schema.String)
})

export const ToolMessage = Schema.Struct({
  role: Schema.Literal("tool"),
  content: Schema.Union(Schema.String, Schema.Array(TextPart)),
  tool_call_id: Schema.String
})

export const ChatMessage = Schema.Union(SystemMessage, UserMessage, AssistantMessage, ToolMessage)
export type ChatMessage = typeof ChatMessage.Type

export const ToolDefinition = Schema.Struct({
  type: Schema.Literal("function"),
  function: Schema.Struct({
    name: Schema.String,
    description: Schema.optional(Schema.String),
    /** JSON Schema of the arguments object. */
    parameters: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
    strict: optionalNullable(Schema.Boolean)
  })
})
export type ToolDefinition = typeof ToolDefinition.Type

export const ToolChoice = Schema.Union(
  Schema.Literal("none", "auto", "required"),
  Schema.Struct({ type: Schema.Literal("function"), function: Schema.Struct({ name: Schema.String }) })
)
export type ToolChoice = typeof ToolChoice.Type

export const ResponseFormat = Schema.Union(
  Schema.Struct({ type: Schema.Literal("text") }),
  Schema.Struct({ type: Schema.Literal("json_object") }),
  Schema.Struct({
    type: Schema.Literal("json_schema"),
    json_schema: Schema.Struct({
      name: Schema.String,
      description: Schema.optional(Schema.String),
      schema: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
      strict: optionalNullable(Schema.Boolean)
    })
  })
)
export type ResponseFormat = typeof ResponseFormat.Type

/**
 * The chat-completions body we accept. Decode it with `Schema.decodeUnknown(ChatRequest)`: fields not listed
 * here are ignored (dropped), so SDK additions do not break callers.
 */
export const ChatRequest = Schema.Struct({
  model: Schema.String,
  messages: Schema.Array(ChatMessage),
  tools: optionalNullable(Schema.Array(ToolDefinition)),
  tool_choice: optionalNullable(ToolChoice),
  parallel_tool_calls: optionalNullable(Schema.Boolean),
  temperature: optionalNullable(Schema.Number),
  top_p: optionalNullable(Schema.Number),
  max_tokens: optionalNullable(Schema.Int),
  max_completion_tokens: optionalNullable(Schema.Int),
  stop: optionalNullable(Schema.Union(Schema.String, Schema.Array(Schema.String))),
  response_format: optionalNullable(ResponseFormat),
  stream: optionalNullable(Schema.Boolean),
  stream_options: optionalNullable(Schema.Struct({ include_usage: optionalNullable(Schema.Boolean) })),
  user: optionalNullable(Schema.String),
  seed: optionalNullable(Schema.Int),
  frequency_penalty: optionalNullable(Schema.Number),
  presence_penalty: optionalNullable(Schema.Number),
  reasoning_effort: optionalNullable(Schema.String)
})
export type ChatRequest = typeof ChatRequest.Type

/** Decodes a chat-completions body leniently (unknown fields ignored), for the HTTP endpoints. */
export const decodeChatRequest = Schema.decodeUnknown(ChatRequest, { onExcessProperty: "ignore" })

// ---------------------------------------------------------------------------------------------------------------
// Responses
// ---------------------------------------------------------------------------------------------------------------

export type FinishReason = "stop" | "length" | "tool_calls" | "content_filter"

/**
 * Token counts in OpenAI's sense: `promptTokens` includes `cachedTokens` (Anthropic's cache reads and writes are
 * added to its `input_tokens`), and `completionTokens` includes reasoning/thinking tokens.
 */
export interface Usage {
  readonly promptTokens: number
  readonly completionTokens: number
  readonly cachedTokens: number
}

/**
 * One step of a streamed answer. A stream yields text and tool-call deltas in order, then exactly one `finish`,
 * then at most one `usage` (absent only when the upstream reported none).
 */
export type ChatDelta =
  | { readonly type: "text"; readonly text: string }
  | {
    readonly type: "tool_call"
    /** Position of the tool call in the answer (0, 1, …); all deltas of one call share it. */
    readonly index: number
    /** Present on the first delta of a call. */
    readonly id?: string
    /** Present on the first delta of a call. */
    readonly name?: string
    /** A piece of the arguments' JSON text; concatenate the pieces of one index. */
    readonly arguments: string
  }
  | ({ readonly type: "usage" } & Usage)
  | { readonly type: "finish"; readonly reason: FinishReason }

export interface ChatToolCall {
  readonly id: string
  readonly name: string
  /** JSON text of the arguments. */
  readonly arguments: string
}

/** A whole (non-streamed) answer. */
export interface ChatResult {
  readonly id: string
  /** The model the upstream says answered (or the target's model when it does not say). */
  readonly model: string
  readonly content: string | null
  readonly toolCalls: ReadonlyArray<ChatToolCall>
  readonly finishReason: FinishReason
  readonly usage: Usage
}

// ---------------------------------------------------------------------------------------------------------------
// Targets and errors
// ---------------------------------------------------------------------------------------------------------------

export type ProviderFamily = "openai" | "anthropic" | "google"

/** Where one call goes. Routing (catalog, custom providers, BYOK) builds it; adapters only follow it. */
export interface UpstreamTarget {
  readonly family: ProviderFamily
  /** Up to the version segment, e.g. `https://api.openai.com/v1`, `https://api.anthropic.com/v1`,
   * `https://generativelanguage.googleapis.com/v1beta`. A trailing slash is ignored. */
  readonly baseUrl: string
  /** None for local servers without auth (no auth header is sent). */
  readonly apiKey: Option.Option<Redacted.Redacted>
  /** The upstream's model id (what goes on the wire). */
  readonly model: string
  /** Limit for the response headers of a call and, when streaming, for each gap between chunks. */
  readonly timeoutMs: number
  readonly extraHeaders?: Readonly<Record<string, string>>
}

/**
 * - `http`: the upstream answered with an error status (or an error event inside a stream);
 * - `timeout`: no answer (or no next chunk) within `timeoutMs`;
 * - `network`: connection refused/reset, or a stream that ended before it finished;
 * - `decode`: the upstream's body was not what its wire format promises;
 * - `request`: refused before sending because it cannot be expressed for this upstream (status 400).
 */
export type UpstreamErrorKind = "http" | "timeout" | "network" | "decode" | "request"

export interface UpstreamErrorFields {
  readonly kind: UpstreamErrorKind
  readonly family: ProviderFamily
  /** The upstream's HTTP status (for errors inside a stream, derived from the provider's error type). */
  readonly status?: number | undefined
  /** The upstream's error body, capped to `MAX_ERROR_BODY` characters. */
  readonly body?: string | undefined
  /** The provider's error code or type (`rate_limit_error`, `context_length_exceeded`, `RESOURCE_EXHAUSTED`). */
  readonly code?: string | undefined
  readonly message: string
  /** From `retry-after-ms` / `Retry-After` (seconds or HTTP date) or Gemini's `RetryInfo.retryDelay`. */
  readonly retryAfterMs?: number | undefined
}

export const MAX_ERROR_BODY = 2000

/** Whether trying again may succeed: 429, 5xx (and 529), timeouts and network failures. */
export const isRetryable = (fields: Pick<UpstreamErrorFields, "kind" | "status">): boolean => {
  switch (fields.kind) {
    case "timeout":
    case "network":
      return true
    case "decode":
    case "request":
      return false
    case "http":
      return fields.status !== undefined && (fields.status === 429 || fields.status >= 500)
  }
}

export class UpstreamError extends Data.TaggedError("UpstreamError")<UpstreamErrorFields & {
  readonly retryable: boolean
}> {
  constructor(fields: UpstreamErrorFields & { readonly retryable?: boolean }) {
    super({ ...fields, retryable: fields.retryable ?? isRetryable(fields) })
  }
}
