/**
 * Sessions over HTTP (§4.3): eight operations plus `GET /v1/sessions/{id}/stream` (replay and follow, for
 * reconnects). Authenticated with the project API key in `SERVICE_API_KEY`, or a Bearer `ect_` client token
 * (browser execution), which sees only the sessions it created. Errors use the platform envelope.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { errorResponse } from "../../schemas/errors.ts"
import {
  ApproveRequest,
  CreateSessionRequest,
  DeletedSession,
  RejectRequest,
  RejectResponse,
  Session,
  SessionEventList,
  SessionEventsQuery,
  SessionList,
  SessionListQuery,
  SessionStreamQuery,
  TurnRequest
} from "../../schemas/sessions.ts"
import { BrowserAuth } from "../auth/Api.ts"

const EventStream = HttpApiSchema.Text({ contentType: "text/event-stream" })
const IdPath = Schema.Struct({ id: Schema.String })

export class SessionsApi extends HttpApiGroup.make("sessions")
  .add(
    HttpApiEndpoint.post("create", "/v1/sessions")
      .setPayload(CreateSessionRequest)
      .addSuccess(Session, { status: 201 })
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/sessions")
      .setUrlParams(SessionListQuery)
      .addSuccess(SessionList)
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/sessions/:id")
      .setPath(IdPath)
      .addSuccess(Session)
  )
  .add(
    HttpApiEndpoint.del("delete", "/v1/sessions/:id")
      .setPath(IdPath)
      .addSuccess(DeletedSession)
  )
  .add(
    HttpApiEndpoint.post("turn", "/v1/sessions/:id/turns")
      .setPath(IdPath)
      .setPayload(TurnRequest)
      .addSuccess(EventStream)
  )
  .add(
    HttpApiEndpoint.post("approve", "/v1/sessions/:id/approve")
      .setPath(IdPath)
      .setPayload(ApproveRequest)
      .addSuccess(EventStream)
  )
  .add(
    HttpApiEndpoint.post("reject", "/v1/sessions/:id/reject")
      .setPath(IdPath)
      .setPayload(RejectRequest)
      .addSuccess(RejectResponse)
  )
  .add(
    HttpApiEndpoint.get("events", "/v1/sessions/:id/events")
      .setPath(IdPath)
      .setUrlParams(SessionEventsQuery)
      .addSuccess(SessionEventList)
  )
  .add(
    HttpApiEndpoint.get("stream", "/v1/sessions/:id/stream")
      .setPath(IdPath)
      .setUrlParams(SessionStreamQuery)
      .setHeaders(Schema.Struct({ "last-event-id": Schema.optional(Schema.String) }))
      .addSuccess(EventStream)
  )
  .middleware(BrowserAuth)
  .addError(errorResponse("platform", 400))
  .addError(errorResponse("platform", 404))
  .addError(errorResponse("platform", 409))
{}
