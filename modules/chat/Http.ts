/** Chat handlers: one implementation behind both paths; JSON or SSE in OpenAI's format. */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect, FiberRef, Stream } from "effect"
import * as Crypto from "node:crypto"
import { GatewayApi } from "../../layers/http/api.ts"
import { CurrentRequestStart } from "../../layers/http/errors.ts"
import { currentRequestId } from "../../layers/http/middleware.ts"
import { sseEvent } from "../../layers/providers/sse.ts"
import { CurrentProject } from "../auth/Principal.ts"
import { Vision } from "../vision/Service.ts"
import type { GatewayChatRequest } from "./Api.ts"
import { ChatGateway, upstreamFailure } from "./Service.ts"
import { chunkEncoder, completionObject } from "./wire.ts"

const encoder = new TextEncoder()
const ms = (value: number) => (Math.round(value * 1000) / 1000).toString()

const chatHandler = (gateway: ChatGateway, vision: Vision) => (payload: typeof GatewayChatRequest.Type) =>
  Effect.gen(function*() {
    const caller = yield* CurrentProject
    const requestId = yield* currentRequestId
    const requestStart = (yield* FiberRef.get(CurrentRequestStart)) ?? performance.now()
    const { fallbacks, ...asked } = payload
    // Image content goes through vision: checked images, and a vision-capable model when the chosen one lacks it.
    const { request, kind } = yield* vision.prepareChat(caller.projectId, asked)
    const ctx = { projectId: caller.projectId, tenantId: caller.tenantId, requestId, kind }
    const id = `chatcmpl-${Crypto.randomBytes(12).toString("hex")}`
    const created = Math.floor(Date.now() / 1000)

    if (request.stream !== true) {
      const completion = yield* gateway.complete(ctx, request, { fallbacks })
      const overhead = performance.now() - requestStart - completion.timings.ttftMs
      return HttpServerResponse.unsafeJson(
        completionObject({ id, created, result: completion.result, route: completion.route, cost: completion.cost }),
        {
          headers: {
            "x-provider": completion.route.provider,
            "x-gateway-overhead-ms": ms(overhead),
            "x-time-to-first-token-ms": ms(completion.timings.ttftMs)
          }
        }
      )
    }

    const streamed = yield* gateway.stream(ctx, request, { fallbacks })
    const encode = chunkEncoder({ id, created, model: streamed.route.model })
    const body = streamed.deltas.pipe(
      Stream.mapConcat(encode),
      Stream.map((chunk) => encoder.encode(sseEvent({ data: JSON.stringify(chunk) }))),
      // After the first byte the status is sent: an upstream failure becomes an error event, as OpenAI does.
      Stream.catchAll((error) => {
        const failure = upstreamFailure(error)
        return Stream.make(encoder.encode(sseEvent({
          data: JSON.stringify({ error: { message: failure.message, type: failure.type, code: failure.code, param: null } })
        })))
      }),
      Stream.concat(Stream.sync(() => encoder.encode(sseEvent({ data: "[DONE]" }))))
    )
    return HttpServerResponse.stream(body, {
      contentType: "text/event-stream",
      headers: {
        "cache-control": "no-cache",
        "x-accel-buffering": "no",
        "x-provider": streamed.route.provider,
        "x-gateway-overhead-ms": ms(streamed.timings.upstreamStartedAt - requestStart),
        "x-time-to-first-token-ms": ms(streamed.timings.ttftMs)
      }
    })
  })

export const ChatHttpLive = HttpApiBuilder.group(GatewayApi, "chat", (handlers) =>
  Effect.map(Effect.all([ChatGateway, Vision]), ([gateway, vision]) =>
    handlers.handle("chat", ({ payload }) => chatHandler(gateway, vision)(payload))))

export const OpenAiChatHttpLive = HttpApiBuilder.group(GatewayApi, "openaiChat", (handlers) =>
  Effect.map(Effect.all([ChatGateway, Vision]), ([gateway, vision]) =>
    handlers.handle("chatCompletions", ({ payload }) => chatHandler(gateway, vision)(payload))))
