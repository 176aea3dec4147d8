/** Vision handlers: read the body (JSON or multipart), call the service, answer JSON or SSE. */
import { HttpApiBuilder, type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Stream } from "effect"
import { GatewayApi } from "../../layers/http/api.ts"
import { currentRequestId } from "../../layers/http/middleware.ts"
import { sseEvent } from "../../layers/providers/sse.ts"
import { CurrentProject } from "../auth/Principal.ts"
import { readVisionInput } from "./input.ts"
import type { Preset } from "./presets.ts"
import { Vision, type VisionEvent } from "./Service.ts"

const encoder = new TextEncoder()
const line = (data: unknown) => encoder.encode(sseEvent({ data: JSON.stringify(data) }))

const upgradeHeader = (from: string | null): Record<string, string> => (from === null ? {} : { "x-model-upgraded-from": from })

const handler = (vision: Vision, preset: Preset) => ({ request }: { readonly request: HttpServerRequest.HttpServerRequest }) =>
  Effect.gen(function*() {
    const caller = yield* CurrentProject
    const requestId = yield* currentRequestId
    const input = yield* readVisionInput(request)
    const ctx = { projectId: caller.projectId, tenantId: caller.tenantId, requestId, kind: "vision" }

    if (!input.stream) {
      const answer = yield* vision.analyze(ctx, preset, input)
      return HttpServerResponse.unsafeJson(answer.body, {
        headers: { "x-provider": answer.route.provider, ...upgradeHeader(answer.upgradedFrom) }
      })
    }

    const streamed = yield* vision.stream(ctx, preset, input)
    const body = streamed.events.pipe(
      Stream.map((event: VisionEvent) => line(event.type === "delta" ? { delta: event.text } : { done: true, ...event.body })),
      // After the first byte the status is sent: a later upstream failure becomes an error line.
      Stream.catchAll((error) => Stream.make(line({ error: error.code, message: error.message }))),
      Stream.concat(Stream.sync(() => encoder.encode(sseEvent({ data: "[DONE]" }))))
    )
    return HttpServerResponse.stream(body, {
      contentType: "text/event-stream",
      headers: {
        "cache-control": "no-cache",
        "x-accel-buffering": "no",
        "x-provider": streamed.route.provider,
        ...upgradeHeader(streamed.upgradedFrom)
      }
    })
  })

export const VisionHttpLive = HttpApiBuilder.group(GatewayApi, "vision", (handlers) =>
  Effect.map(Vision, (vision) =>
    handlers
      .handleRaw("analyze", handler(vision, "analyze"))
      .handleRaw("describe", handler(vision, "describe"))
      .handleRaw("ocr", handler(vision, "ocr"))
      .handleRaw("classify", handler(vision, "classify"))))
