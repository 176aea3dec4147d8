/** OpenAI-compatible request: our body is already OpenAI's; only the model, streaming flags and nulls change. */
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { Option, Redacted } from "effect"
import { withoutNulls } from "../content.ts"
import type { ChatRequest, UpstreamTarget } from "../types.ts"

export const toOpenAIBody = (target: UpstreamTarget, request: ChatRequest, stream: boolean): Record<string, unknown> => {
  const { model: _model, stream: _stream, stream_options: _streamOptions, ...rest } = request
  const body = withoutNulls(rest)
  body.model = target.model
  if (stream) {
    body.stream = true
    // Usage arrives in one last chunk only when asked for.
    body.stream_options = { include_usage: true }
  }
  return body
}

export const toOpenAIRequest = (target: UpstreamTarget, request: ChatRequest, stream: boolean) =>
  HttpClientRequest.post(`${target.baseUrl.replace(/\/+$/, "")}/chat/completions`).pipe(
    HttpClientRequest.setHeaders({
      accept: stream ? "text/event-stream" : "application/json",
      ...target.extraHeaders
    }),
    (req) => Option.match(target.apiKey, { onNone: () => req, onSome: (key) => HttpClientRequest.bearerToken(req, Redacted.value(key)) }),
    HttpClientRequest.bodyUnsafeJson(toOpenAIBody(target, request, stream))
  )
