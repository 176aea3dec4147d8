/**
 * OpenAI's chat-completions wire format, whatever the upstream: the whole `chat.completion` object and the
 * `chat.completion.chunk` SSE stream, ending with a usage-and-cost chunk and `data: [DONE]`.
 */
import type { ChatResult, FinishReason, Usage } from "../../layers/providers/types.ts"
import type { Cost } from "../usage/cost.ts"
import type { GatewayDelta, RouteInfo } from "./Service.ts"

const usageOut = (usage: Usage) => ({
  prompt_tokens: usage.promptTokens,
  completion_tokens: usage.completionTokens,
  total_tokens: usage.promptTokens + usage.completionTokens,
  prompt_tokens_details: { cached_tokens: usage.cachedTokens }
})

const costOut = (cost: Cost) => ({
  providerCostUsd: cost.providerCostUsd,
  serviceChargeUsd: cost.serviceChargeUsd,
  markupPercentage: cost.markupPercentage
})

export const completionObject = (options: {
  readonly id: string
  readonly created: number
  readonly result: ChatResult
  readonly route: RouteInfo
  readonly cost: Cost
}) => ({
  id: options.id,
  object: "chat.completion" as const,
  created: options.created,
  model: options.route.model,
  choices: [{
    index: 0,
    message: {
      role: "assistant" as const,
      content: options.result.content,
      refusal: null,
      ...(options.result.toolCalls.length > 0
        ? {
          tool_calls: options.result.toolCalls.map((call) => ({
            id: call.id,
            type: "function" as const,
            function: { name: call.name, arguments: call.arguments }
          }))
        }
        : {})
    },
    finish_reason: options.result.finishReason,
    logprobs: null
  }],
  usage: usageOut(options.result.usage),
  provider: options.route.provider,
  cost: costOut(options.cost),
  pricing_status: options.route.pricingStatus
})

/** Turns gateway deltas into chunk objects (without the SSE framing). */
export const chunkEncoder = (options: { readonly id: string; readonly created: number; readonly model: string }) => {
  let sentRole = false
  const base = (choices: ReadonlyArray<unknown>) => ({
    id: options.id,
    object: "chat.completion.chunk" as const,
    created: options.created,
    model: options.model,
    choices
  })
  const choice = (delta: Record<string, unknown>, finishReason: FinishReason | null = null) => {
    const withRole = sentRole ? delta : { role: "assistant", ...delta }
    sentRole = true
    return base([{ index: 0, delta: withRole, finish_reason: finishReason, logprobs: null }])
  }
  return (delta: GatewayDelta): ReadonlyArray<unknown> => {
    switch (delta.type) {
      case "text":
        return delta.text.length > 0 ? [choice({ content: delta.text })] : []
      case "tool_call":
        return [choice({
          tool_calls: [{
            index: delta.index,
            ...(delta.id === undefined ? {} : { id: delta.id, type: "function" }),
            function: { ...(delta.name === undefined ? {} : { name: delta.name }), arguments: delta.arguments }
          }]
        })]
      case "finish":
        return [choice({}, delta.reason)]
      case "usage":
        return []
      case "summary":
        return [{
          ...base([]),
          usage: usageOut(delta.usage),
          provider: delta.route.provider,
          cost: costOut(delta.cost),
          pricing_status: delta.route.pricingStatus,
          ttft_ms: Math.round(delta.ttftMs * 1000) / 1000
        }]
    }
  }
}
