/** Gemini `alt=sse` events (`data: <GenerateContentResponse>`, no [DONE]) → deltas. */
import { Either, Predicate } from "effect"
import { decodeError, notJson, parseEventJson, streamEndedEarly, type StreamMapper } from "../adapter.ts"
import type { SseMessage } from "../sse.ts"
import { type ChatDelta, type FinishReason, MAX_ERROR_BODY, UpstreamError, type Usage } from "../types.ts"
import { decodeGoogleResponse, partText, readGoogleError, toFinishReason, toToolCall, toUsage } from "./response.ts"

export const makeGoogleStreamMapper = (): StreamMapper => {
  let usage: Usage | undefined
  let finish: FinishReason | undefined
  let toolCalls = 0

  const onEvent = (event: SseMessage): ReadonlyArray<ChatDelta> | UpstreamError => {
    const json = parseEventJson(event.data)
    if (json === undefined) return notJson("google", event.data)
    if (Predicate.isRecord(json) && json.error !== undefined) {
      const info = readGoogleError(json)
      const code = Predicate.isRecord(json.error) && typeof json.error.code === "number" ? json.error.code : 500
      return new UpstreamError({
        kind: "http",
        family: "google",
        status: code,
        body: event.data.slice(0, MAX_ERROR_BODY),
        code: info.code,
        message: `google upstream reported an error mid-stream: ${info.message ?? "unknown error"}`
      })
    }
    const decoded = decodeGoogleResponse(json)
    if (Either.isLeft(decoded)) return decodeError("google", json, decoded.left)
    const response = decoded.right
    // Each event repeats the running totals.
    if (response.usageMetadata) usage = toUsage(response.usageMetadata)
    const out: Array<ChatDelta> = []
    const candidate = response.candidates?.[0]
    for (const part of candidate?.content?.parts ?? []) {
      const text = partText(part)
      if (text) out.push({ type: "text", text })
      if (part.functionCall) {
        const call = toToolCall(part.functionCall)
        out.push({ type: "tool_call", index: toolCalls++, id: call.id, name: call.name, arguments: call.arguments })
      }
    }
    if (finish === undefined) {
      if (candidate?.finishReason) finish = toFinishReason(candidate.finishReason, toolCalls > 0)
      else if (candidate === undefined && response.promptFeedback?.blockReason) finish = "content_filter"
      if (finish !== undefined) out.push({ type: "finish", reason: finish })
    }
    return out
  }

  const onEnd = (): ReadonlyArray<ChatDelta> | UpstreamError => {
    if (finish === undefined) return streamEndedEarly("google")
    return usage !== undefined ? [{ type: "usage", ...usage }] : []
  }

  return { onEvent, onEnd }
}
