/**
 * Anthropic stream events → deltas: `message_start` (input usage), `content_block_start` (text or tool_use),
 * `content_block_delta` (`text_delta`, `input_json_delta`), `message_delta` (stop reason, output usage),
 * `message_stop`, `ping`, `error`. Routes on the data's `type`, which repeats the `event:` line.
 */
import { Predicate } from "effect"
import { notJson, parseEventJson, streamEndedEarly, type StreamMapper } from "../adapter.ts"
import type { SseMessage } from "../sse.ts"
import { type ChatDelta, type FinishReason, MAX_ERROR_BODY, UpstreamError } from "../types.ts"
import { type AnthropicUsage, readAnthropicError, statusOfErrorType, toFinishReason, toUsage } from "./response.ts"

const num = (value: unknown): number | undefined => (typeof value === "number" ? value : undefined)
const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined)

const readUsage = (value: unknown): AnthropicUsage => {
  if (!Predicate.isRecord(value)) return {}
  return {
    input_tokens: num(value.input_tokens),
    output_tokens: num(value.output_tokens),
    cache_read_input_tokens: num(value.cache_read_input_tokens),
    cache_creation_input_tokens: num(value.cache_creation_input_tokens)
  }
}

/** Later usage reports repeat or grow the earlier ones: keep the latest value of each field. */
const mergeUsage = (a: AnthropicUsage, b: AnthropicUsage): AnthropicUsage => ({
  input_tokens: b.input_tokens ?? a.input_tokens,
  output_tokens: b.output_tokens ?? a.output_tokens,
  cache_read_input_tokens: b.cache_read_input_tokens ?? a.cache_read_input_tokens,
  cache_creation_input_tokens: b.cache_creation_input_tokens ?? a.cache_creation_input_tokens
})

export const makeAnthropicStreamMapper = (): StreamMapper => {
  let usage: AnthropicUsage | undefined
  let finish: FinishReason | undefined
  let stopped = false
  /** Anthropic content-block index → our tool-call index (text blocks take no tool index). */
  const toolIndexByBlock = new Map<number, number>()

  const onEvent = (event: SseMessage): ReadonlyArray<ChatDelta> | UpstreamError => {
    const json = parseEventJson(event.data)
    if (!Predicate.isRecord(json)) return notJson("anthropic", event.data)
    switch (json.type) {
      case "message_start": {
        const message = json.message
        if (Predicate.isRecord(message)) usage = mergeUsage(usage ?? {}, readUsage(message.usage))
        return []
      }
      case "content_block_start": {
        const block = json.content_block
        const index = num(json.index) ?? 0
        if (!Predicate.isRecord(block)) return []
        if (block.type === "text" && typeof block.text === "string" && block.text.length > 0) {
          return [{ type: "text", text: block.text }]
        }
        if (block.type === "tool_use") {
          const toolIndex = toolIndexByBlock.size
          toolIndexByBlock.set(index, toolIndex)
          const id = str(block.id)
          const name = str(block.name)
          return [{ type: "tool_call", index: toolIndex, ...(id ? { id } : {}), ...(name ? { name } : {}), arguments: "" }]
        }
        return []
      }
      case "content_block_delta": {
        const delta = json.delta
        if (!Predicate.isRecord(delta)) return []
        if (delta.type === "text_delta" && typeof delta.text === "string" && delta.text.length > 0) {
          return [{ type: "text", text: delta.text }]
        }
        if (delta.type === "input_json_delta" && typeof delta.partial_json === "string") {
          const toolIndex = toolIndexByBlock.get(num(json.index) ?? 0)
          if (toolIndex === undefined || delta.partial_json.length === 0) return []
          return [{ type: "tool_call", index: toolIndex, arguments: delta.partial_json }]
        }
        // thinking_delta, signature_delta, citations_delta: not part of the OpenAI shape.
        return []
      }
      case "message_delta": {
        usage = mergeUsage(usage ?? {}, readUsage(json.usage))
        const delta = json.delta
        const reason = Predicate.isRecord(delta) ? str(delta.stop_reason) : undefined
        if (reason !== undefined && finish === undefined) {
          finish = toFinishReason(reason)
          return [{ type: "finish", reason: finish }]
        }
        return []
      }
      case "message_stop":
        stopped = true
        return []
      case "error": {
        const info = readAnthropicError(json)
        return new UpstreamError({
          kind: "http",
          family: "anthropic",
          status: statusOfErrorType(info.code),
          body: event.data.slice(0, MAX_ERROR_BODY),
          code: info.code,
          message: `anthropic upstream reported an error mid-stream: ${info.message ?? "unknown error"}`
        })
      }
      default:
        // ping, content_block_stop and future event types.
        return []
    }
  }

  const onEnd = (): ReadonlyArray<ChatDelta> | UpstreamError => {
    if (!stopped && finish === undefined) return streamEndedEarly("anthropic")
    const out: Array<ChatDelta> = []
    if (finish === undefined) out.push({ type: "finish", reason: "stop" })
    if (usage !== undefined) out.push({ type: "usage", ...toUsage(usage) })
    return out
  }

  return { onEvent, onEnd }
}
