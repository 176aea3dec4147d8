/**
 * OpenAI chat body → Anthropic Messages body. System and developer messages become `system`; tool calls become
 * `tool_use` blocks and tool messages `tool_result` blocks in a user turn; consecutive turns of one role merge.
 */
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { Either, Option, Redacted } from "effect"
import { contentParts, contentText, parseArguments, parseDataUrl } from "../content.ts"
import { type ChatRequest, type ToolChoice, UpstreamError, type UpstreamTarget } from "../types.ts"

export const ANTHROPIC_VERSION = "2023-06-01"
/** Anthropic requires `max_tokens`; this applies when the caller set none. */
export const DEFAULT_MAX_TOKENS = 4096

type Block = Readonly<Record<string, unknown>>
interface Turn {
  readonly role: "user" | "assistant"
  readonly content: Array<Block>
}

const imageBlock = (url: string): Block => {
  const inline = parseDataUrl(url)
  return inline
    ? { type: "image", source: { type: "base64", media_type: inline.mediaType, data: inline.data } }
    : { type: "image", source: { type: "url", url } }
}

const toolChoice = (choice: ToolChoice | null | undefined, parallel: boolean | null | undefined): Block | undefined => {
  const disable = parallel === false ? { disable_parallel_tool_use: true } : {}
  if (choice === null || choice === undefined) return parallel === false ? { type: "auto", ...disable } : undefined
  if (choice === "none") return { type: "none" }
  if (choice === "auto") return { type: "auto", ...disable }
  if (choice === "required") return { type: "any", ...disable }
  return { type: "tool", name: choice.function.name, ...disable }
}

export const toAnthropicBody = (
  target: UpstreamTarget,
  request: ChatRequest,
  stream: boolean
): Either.Either<Record<string, unknown>, UpstreamError> => {
  const system: Array<string> = []
  const turns: Array<Turn> = []
  const push = (role: Turn["role"], blocks: Array<Block>) => {
    if (blocks.length === 0) return
    const last = turns[turns.length - 1]
    if (last !== undefined && last.role === role) last.content.push(...blocks)
    else turns.push({ role, content: blocks })
  }

  for (const message of request.messages) {
    switch (message.role) {
      case "system":
      case "developer": {
        const text = contentText(message.content)
        if (text.length > 0) system.push(text)
        break
      }
      case "user": {
        const blocks: Array<Block> = []
        for (const part of contentParts(message.content)) {
          if (part.type === "text") {
            // Anthropic rejects empty text blocks.
            if (part.text.length > 0) blocks.push({ type: "text", text: part.text })
          } else {
            blocks.push(imageBlock(part.image_url.url))
          }
        }
        push("user", blocks)
        break
      }
      case "assistant": {
        const blocks: Array<Block> = []
        const text = contentText(message.content)
        if (text.length > 0) blocks.push({ type: "text", text })
        for (const call of message.tool_calls ?? []) {
          const input = parseArguments(call.function.arguments)
          if (input === undefined) {
            return Either.left(
              new UpstreamError({
                kind: "request",
                family: "anthropic",
                status: 400,
                message: `the arguments of tool call ${call.id} are not a JSON object`
              })
            )
          }
          blocks.push({ type: "tool_use", id: call.id, name: call.function.name, input })
        }
        push("assistant", blocks)
        break
      }
      case "tool": {
        push("user", [{ type: "tool_result", tool_use_id: message.tool_call_id, content: contentText(message.content) }])
        break
      }
    }
  }

  const body: Record<string, unknown> = {
    model: target.model,
    max_tokens: request.max_completion_tokens ?? request.max_tokens ?? DEFAULT_MAX_TOKENS,
    messages: turns
  }
  if (system.length > 0) body.system = system.join("\n\n")
  if (request.temperature !== null && request.temperature !== undefined) body.temperature = request.temperature
  if (request.top_p !== null && request.top_p !== undefined) body.top_p = request.top_p
  if (request.stop !== null && request.stop !== undefined) {
    body.stop_sequences = typeof request.stop === "string" ? [request.stop] : request.stop
  }
  if (request.user) body.metadata = { user_id: request.user }
  if (request.tools && request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      name: tool.function.name,
      ...(tool.function.description !== undefined ? { description: tool.function.description } : {}),
      input_schema: tool.function.parameters ?? { type: "object", properties: {} }
    }))
    const choice = toolChoice(request.tool_choice, request.parallel_tool_calls)
    if (choice) body.tool_choice = choice
  }
  if (stream) body.stream = true
  return Either.right(body)
}

export const toAnthropicRequest = (target: UpstreamTarget, request: ChatRequest, stream: boolean) =>
  Either.map(toAnthropicBody(target, request, stream), (body) =>
    HttpClientRequest.post(`${target.baseUrl.replace(/\/+$/, "")}/messages`).pipe(
      HttpClientRequest.setHeaders({
        accept: stream ? "text/event-stream" : "application/json",
        "anthropic-version": ANTHROPIC_VERSION,
        ...target.extraHeaders
      }),
      (req) =>
        Option.match(target.apiKey, {
          onNone: () => req,
          onSome: (key) => HttpClientRequest.setHeader(req, "x-api-key", Redacted.value(key))
        }),
      HttpClientRequest.bodyUnsafeJson(body)
    ))
