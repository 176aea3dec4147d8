/** Handlers of the sessions group: decode, call `Sessions`, shape the answer (SSE for turns and streams). */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, type Stream } from "effect"
import { GatewayApi } from "../../layers/http/api.ts"
import { currentRequestId } from "../../layers/http/middleware.ts"
import { ApiError } from "../../schemas/errors.ts"
import { CurrentProject } from "../auth/Principal.ts"
import type { StoredEvent } from "./events.ts"
import { Sessions } from "./Service.ts"
import { sseBody } from "./stream.ts"

const sse = (events: Stream.Stream<StoredEvent, SqlError>) =>
  HttpServerResponse.stream(sseBody(events), {
    contentType: "text/event-stream",
    headers: { "cache-control": "no-cache", "x-accel-buffering": "no" }
  })

const LAST_EVENT_ID = /^\d{1,10}$/

export const SessionsHttpLive = HttpApiBuilder.group(GatewayApi, "sessions", (handlers) =>
  Effect.gen(function*() {
    const sessions = yield* Sessions
    return handlers
      .handle("create", ({ payload }) =>
        Effect.flatMap(CurrentProject, (caller) =>
          sessions.create(caller, { agentId: payload.agent_id ?? null, metadata: payload.metadata ?? {} })))
      .handle("list", ({ urlParams }) => Effect.flatMap(CurrentProject, (caller) => sessions.list(caller, urlParams)))
      .handle("get", ({ path }) => Effect.flatMap(CurrentProject, (caller) => sessions.get(caller, path.id)))
      .handle("delete", ({ path }) => Effect.flatMap(CurrentProject, (caller) => sessions.remove(caller, path.id)))
      .handle("turn", ({ path, payload }) =>
        Effect.gen(function*() {
          const caller = yield* CurrentProject
          const requestId = yield* currentRequestId
          return sse(yield* sessions.startTurn(caller, path.id, payload, requestId))
        }))
      .handle("approve", ({ path, payload }) =>
        Effect.gen(function*() {
          const caller = yield* CurrentProject
          const requestId = yield* currentRequestId
          return sse(yield* sessions.approve(caller, path.id, payload, requestId))
        }))
      .handle("reject", ({ path, payload }) =>
        Effect.flatMap(CurrentProject, (caller) => sessions.reject(caller, path.id, payload.action_id)))
      .handle("events", ({ path, urlParams }) =>
        Effect.flatMap(CurrentProject, (caller) => sessions.events(caller, path.id, urlParams)))
      .handle("stream", ({ path, urlParams, headers }) =>
        Effect.gen(function*() {
          const caller = yield* CurrentProject
          const header = headers["last-event-id"]?.trim()
          if (header !== undefined && header !== "" && !LAST_EVENT_ID.test(header)) {
            return yield* ApiError.badRequest("Last-Event-ID must be an event sequence (a non-negative integer)", {
              code: "invalid_last_event_id",
              param: "Last-Event-ID"
            })
          }
          const after = header !== undefined && header !== "" ? Number(header) : urlParams.after ?? 0
          return sse(yield* sessions.stream(caller, path.id, after))
        }))
  }))
