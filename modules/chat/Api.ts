/**
 * Chat completions: `POST /api/ai/chat` (SERVICE_API_KEY, flat errors) and the same handler at
 * `POST /api/v1/chat/completions` (API key as SERVICE_API_KEY or Bearer, OpenAI-shaped errors), so the official
 * `openai` SDK works unchanged with `baseURL` `…/api/v1`.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { ChatRequest } from "../../layers/providers/types.ts"
import { errorResponse } from "../../schemas/errors.ts"
import { ModelsAuth, ServiceKeyAuth } from "../auth/Api.ts"

/** The OpenAI chat-completions body plus `fallbacks`: models tried in order when the requested one fails. */
export const GatewayChatRequest = Schema.Struct({
  ...ChatRequest.fields,
  fallbacks: Schema.optional(Schema.Array(Schema.String).pipe(Schema.maxItems(5)))
}).annotations({ identifier: "ChatCompletionRequest" })

export const ChatCompletion = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("chat.completion"),
  created: Schema.Number,
  model: Schema.String,
  choices: Schema.Array(Schema.Unknown),
  usage: Schema.Unknown,
  provider: Schema.String,
  cost: Schema.Struct({
    providerCostUsd: Schema.NullOr(Schema.Number),
    serviceChargeUsd: Schema.Number,
    markupPercentage: Schema.Number
  }),
  pricing_status: Schema.String
}).annotations({ identifier: "ChatCompletion" })

const EventStream = HttpApiSchema.Text({ contentType: "text/event-stream" })

export class ChatApi extends HttpApiGroup.make("chat")
  .add(
    HttpApiEndpoint.post("chat", "/api/ai/chat")
      .setPayload(GatewayChatRequest)
      .addSuccess(ChatCompletion)
      .addSuccess(EventStream)
      .addError(errorResponse("flat", 400))
      .addError(errorResponse("flat", 403))
      .addError(errorResponse("flat", 502))
  )
  .middleware(ServiceKeyAuth)
{}

export class OpenAiChatApi extends HttpApiGroup.make("openaiChat")
  .add(
    HttpApiEndpoint.post("chatCompletions", "/api/v1/chat/completions")
      .setPayload(GatewayChatRequest)
      .addSuccess(ChatCompletion)
      .addSuccess(EventStream)
      .addError(errorResponse("platform", 400))
      .addError(errorResponse("platform", 403))
      .addError(errorResponse("platform", 502))
  )
  .middleware(ModelsAuth)
{}
