/**
 * OpenAI chat body → Gemini `generateContent` body: `systemInstruction`, `contents` of `user`/`model` turns with
 * `text`, `inlineData` (data: URLs), `fileData` (other URLs), `functionCall` and `functionResponse` parts,
 * `tools[].functionDeclarations` (JSON Schema as `parametersJsonSchema`), `toolConfig`, `generationConfig`.
 */
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { Either, Option, Redacted } from "effect"
import { contentParts, contentText, guessImageMime, parseArguments, parseDataUrl, withoutNulls } from "../content.ts"
import { type ChatRequest, type ToolChoice, UpstreamError, type UpstreamTarget } from "../types.ts"

type Part = Readonly<Record<string, unknown>>
interface Content {
  readonly role: "user" | "model"
  readonly parts: Array<Part>
}

const imagePart = (url: string): Part => {
  const inline = parseDataUrl(url)
  return inline
    ? { inlineData: { mimeType: inline.mediaType, data: inline.data } }
    : { fileData: { mimeType: guessImageMime(url), fileUri: url } }
}

/** A tool's output as the object Gemini wants: the JSON object itself, else `{content: text}`. */
const toolResponse = (text: string): Record<string, unknown> => parseArguments(text) ?? { content: text }

const toolConfig = (choice: ToolChoice | null | undefined): Record<string, unknown> | undefined => {
  if (choice === null || choice === undefined) return undefined
  if (choice === "none") return { functionCallingConfig: { mode: "NONE" } }
  if (choice === "auto") return { functionCallingConfig: { mode: "AUTO" } }
  if (choice === "required") return { functionCallingConfig: { mode: "ANY" } }
  return { functionCallingConfig: { mode: "ANY", allowedFunctionNames: [choice.function.name] } }
}

const requestError = (message: string) =>
  Either.left(new UpstreamError({ kind: "request", family: "google", status: 400, message }))

export const toGoogleBody = (request: ChatRequest): Either.Either<Record<string, unknown>, UpstreamError> => {
  const system: Array<string> = []
  const contents: Array<Content> = []
  /** Gemini answers a call by function name; OpenAI by call id. */
  const toolNameById = new Map<string, string>()
  const push = (role: Content["role"], parts: Array<Part>) => {
    if (parts.length === 0) return
    const last = contents[contents.length - 1]
    if (last !== undefined && last.role === role) last.parts.push(...parts)
    else contents.push({ role, parts })
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
        const parts: Array<Part> = []
        for (const part of contentParts(message.content)) {
          if (part.type === "text") {
            if (part.text.length > 0) parts.push({ text: part.text })
          } else {
            parts.push(imagePart(part.image_url.url))
          }
        }
        push("user", parts)
        break
      }
      case "assistant": {
        const parts: Array<Part> = []
        const text = contentText(message.content)
        if (text.length > 0) parts.push({ text })
        for (const call of message.tool_calls ?? []) {
          const args = parseArguments(call.function.arguments)
          if (args === undefined) return requestError(`the arguments of tool call ${call.id} are not a JSON object`)
          toolNameById.set(call.id, call.function.name)
          parts.push({ functionCall: { name: call.function.name, args } })
        }
        push("model", parts)
        break
      }
      case "tool": {
        const name = toolNameById.get(message.tool_call_id)
        if (name === undefined) {
          return requestError(`tool message answers ${message.tool_call_id}, which no earlier assistant message called`)
        }
        push("user", [{ functionResponse: { name, response: toolResponse(contentText(message.content)) } }])
        break
      }
    }
  }

  const format = request.response_format
  const generationConfig = withoutNulls({
    temperature: request.temperature,
    topP: request.top_p,
    maxOutputTokens: request.max_completion_tokens ?? request.max_tokens,
    stopSequences: typeof request.stop === "string" ? [request.stop] : request.stop,
    seed: request.seed,
    presencePenalty: request.presence_penalty,
    frequencyPenalty: request.frequency_penalty,
    responseMimeType: format && format.type !== "text" ? "application/json" : undefined,
    responseJsonSchema: format?.type === "json_schema" ? format.json_schema.schema : undefined
  })

  const body: Record<string, unknown> = { contents }
  if (system.length > 0) body.systemInstruction = { parts: [{ text: system.join("\n\n") }] }
  if (request.tools && request.tools.length > 0) {
    body.tools = [{
      functionDeclarations: request.tools.map((tool) => ({
        name: tool.function.name,
        ...(tool.function.description !== undefined ? { description: tool.function.description } : {}),
        ...(tool.function.parameters !== undefined ? { parametersJsonSchema: tool.function.parameters } : {})
      }))
    }]
    const config = toolConfig(request.tool_choice)
    if (config) body.toolConfig = config
  }
  if (Object.keys(generationConfig).length > 0) body.generationConfig = generationConfig
  return Either.right(body)
}

export const toGoogleRequest = (target: UpstreamTarget, request: ChatRequest, stream: boolean) =>
  Either.map(toGoogleBody(request), (body) => {
    const model = target.model.replace(/^models\//, "")
    const action = stream ? "streamGenerateContent?alt=sse" : "generateContent"
    return HttpClientRequest.post(`${target.baseUrl.replace(/\/+$/, "")}/models/${model}:${action}`).pipe(
      HttpClientRequest.setHeaders({ accept: stream ? "text/event-stream" : "application/json", ...target.extraHeaders }),
      (req) =>
        Option.match(target.apiKey, {
          onNone: () => req,
          onSome: (key) => HttpClientRequest.setHeader(req, "x-goog-api-key", Redacted.value(key))
        }),
      HttpClientRequest.bodyUnsafeJson(body)
    )
  })
