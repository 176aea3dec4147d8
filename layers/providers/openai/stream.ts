/** OpenAI SSE chunks (`data: {chunk}` … `data: [DONE]`) → deltas. */
import { Either, Schema } from "effect"
import { decodeError, notJson, parseEventJson, streamEndedEarly, type StreamMapper } from "../adapter.ts"
import type { SseMessage } from "../sse.ts"
import { type ChatDelta, type FinishReason, optionalNullable as nullable, UpstreamError, type Usage } from "../types.ts"
import { OpenAIUsage, readOpenAIError, toFinishReason, toUsage } from "./response.ts"

const OpenAIChunk = Schema.Struct({
  choices: nullable(
    Schema.Array(
      Schema.Struct({
        delta: nullable(
          Schema.Struct({
            content: nullable(Schema.String),
            refusal: nullable(Schema.String),
            tool_calls: nullable(
              Schema.Array(
                Schema.Struct({
                  index: nullable(Schema.Number),
                  id: nullable(Schema.String),
                  function: nullable(Schema.Struct({ name: nullable(Schema.String), arguments: nullable(Schema.String) }))
                })
              )
            )
          })
        ),
        finish_reason: nullable(Schema.String)
      })
    )
  ),
  usage: nullable(OpenAIUsage),
  error: nullable(Schema.Unknown)
})

const decodeChunk = Schema.decodeUnknownEither(OpenAIChunk)

export const makeOpenAIStreamMapper = (): StreamMapper => {
  let finish: FinishReason | undefined
  let done = false
  let usage: Usage | undefined

  const onEvent = (event: SseMessage): ReadonlyArray<ChatDelta> | UpstreamError => {
    if (event.data === "[DONE]") {
      done = true
      return []
    }
    const json = parseEventJson(event.data)
    if (json === undefined) return notJson("openai", event.data)
    const decoded = decodeChunk(json)
    if (Either.isLeft(decoded)) return decodeError("openai", json, decoded.left)
    const chunk = decoded.right
    if (chunk.error !== undefined && chunk.error !== null) {
      const info = readOpenAIError(json)
      return new UpstreamError({
        kind: "http",
        family: "openai",
        status: 502,
        body: event.data.slice(0, 2000),
        code: info.code,
        message: `openai upstream reported an error mid-stream: ${info.message ?? "unknown error"}`
      })
    }
    if (chunk.usage) usage = toUsage(chunk.usage)
    const out: Array<ChatDelta> = []
    const choice = chunk.choices?.[0]
    if (choice === undefined) return out
    const delta = choice.delta
    if (delta) {
      const text = delta.content ?? delta.refusal
      if (text) out.push({ type: "text", text })
      const calls = delta.tool_calls ?? []
      for (let i = 0; i < calls.length; i++) {
        const call = calls[i]!
        out.push({
          type: "tool_call",
          index: call.index ?? i,
          ...(call.id ? { id: call.id } : {}),
          ...(call.function?.name ? { name: call.function.name } : {}),
          arguments: call.function?.arguments ?? ""
        })
      }
    }
    if (choice.finish_reason && finish === undefined) {
      finish = toFinishReason(choice.finish_reason)
      out.push({ type: "finish", reason: finish })
    }
    return out
  }

  const onEnd = (): ReadonlyArray<ChatDelta> | UpstreamError => {
    const out: Array<ChatDelta> = []
    if (finish === undefined) {
      if (!done) {
        return streamEndedEarly("openai")
      }
      out.push({ type: "finish", reason: "stop" })
    }
    if (usage) out.push({ type: "usage", ...usage })
    return out
  }

  return { onEvent, onEnd }
}
