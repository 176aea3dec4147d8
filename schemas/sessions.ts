/** Session shapes of the contract (§2.9, §4.3, §6.1). Defaults and bounds are documented in docs/sessions.md. */
import { Schema } from "effect"

export const SessionStatus = Schema.Literal("active", "paused", "completed")
export type SessionStatus = typeof SessionStatus.Type

const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/** Session (§2.9). `total_cost` is the sum of the cost of every turn, in USD. */
export const Session = Schema.Struct({
  id: Schema.String,
  status: SessionStatus,
  turn_count: Schema.Int,
  created_at: Schema.String,
  updated_at: Schema.String,
  agent_id: Schema.NullOr(Schema.String),
  metadata: JsonObject,
  total_cost: Schema.Number
}).annotations({ identifier: "Session" })
export type Session = typeof Session.Type

/** Session event (§2.9): one row of the append-only log. */
export const SessionEvent = Schema.Struct({
  id: Schema.String,
  session_id: Schema.String,
  turn_number: Schema.Int,
  sequence: Schema.Int,
  event_type: Schema.String,
  payload: JsonObject,
  created_at: Schema.String
}).annotations({ identifier: "SessionEvent" })
export type SessionEvent = typeof SessionEvent.Type

export const Pagination = Schema.Struct({
  page: Schema.Int,
  limit: Schema.Int,
  total: Schema.Int,
  total_pages: Schema.Int
}).annotations({ identifier: "Pagination" })
export type Pagination = typeof Pagination.Type

export const SessionList = Schema.Struct({ data: Schema.Array(Session), pagination: Pagination }).annotations({
  identifier: "SessionList"
})

export const SessionEventList = Schema.Struct({ data: Schema.Array(SessionEvent), pagination: Pagination })
  .annotations({ identifier: "SessionEventList" })

/** Page bounds: `page` from 1 (default 1); `limit` per list below. */
export const MAX_PAGE = 1_000_000
export const SESSION_PAGE = { defaultLimit: 20, maxLimit: 100 } as const
export const EVENT_PAGE = { defaultLimit: 100, maxLimit: 1000 } as const

const intParam = (min: number, max: number) =>
  Schema.NumberFromString.pipe(Schema.int(), Schema.between(min, max))

export const SessionListQuery = Schema.Struct({
  status: Schema.optional(SessionStatus),
  page: Schema.optional(intParam(1, MAX_PAGE)),
  limit: Schema.optional(intParam(1, SESSION_PAGE.maxLimit))
})

export const SessionEventsQuery = Schema.Struct({
  turn_number: Schema.optional(intParam(0, 2_147_483_647)),
  page: Schema.optional(intParam(1, MAX_PAGE)),
  limit: Schema.optional(intParam(1, EVENT_PAGE.maxLimit))
})

/** `GET /v1/sessions/{id}/stream?after=N`: replay after sequence N (the `Last-Event-ID` header wins). */
export const SessionStreamQuery = Schema.Struct({
  after: Schema.optional(intParam(0, 2_147_483_647))
})

export const CreateSessionRequest = Schema.Struct({
  agent_id: Schema.optional(Schema.NullOr(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)))),
  metadata: Schema.optional(Schema.NullOr(JsonObject))
})

export const FunctionToolDefinition = Schema.Struct({
  type: Schema.Literal("function"),
  function: Schema.Struct({
    name: Schema.String.pipe(
      Schema.pattern(/^[A-Za-z0-9_-]{1,64}$/, { message: () => "a tool name is 1 to 64 letters, digits, _ or -" })
    ),
    description: Schema.optional(Schema.String.pipe(Schema.maxLength(4096))),
    parameters: Schema.optional(JsonObject)
  }),
  needsApproval: Schema.optional(Schema.Boolean)
})
export type FunctionToolDefinition = typeof FunctionToolDefinition.Type

/** Accepted so it can be refused with a clear `unsupported_tool` (no web search module yet). */
export const WebSearchToolDefinition = Schema.Struct({
  type: Schema.Literal("web_search_preview"),
  needsApproval: Schema.optional(Schema.Boolean)
})

export const TurnToolDefinition = Schema.Union(FunctionToolDefinition, WebSearchToolDefinition)

export const MAX_TOOLS = 128
export const MAX_INPUT_CHARS = 1_000_000
export const MAX_INSTRUCTIONS_CHARS = 256_000

export const TurnRequest = Schema.Struct({
  input: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(MAX_INPUT_CHARS)),
  tools: Schema.optional(Schema.Array(TurnToolDefinition).pipe(Schema.maxItems(MAX_TOOLS))),
  instructions: Schema.optional(Schema.NullOr(Schema.String.pipe(Schema.maxLength(MAX_INSTRUCTIONS_CHARS)))),
  model: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))),
  /** Default true: tool calls pause for the client (see docs/sessions.md). */
  pause_on_tool_calls: Schema.optional(Schema.Boolean)
})
export type TurnRequest = typeof TurnRequest.Type

export const ToolResult = Schema.Struct({
  action_id: Schema.String,
  output: Schema.String.pipe(Schema.maxLength(MAX_INPUT_CHARS))
})

export const ApproveRequest = Schema.Struct({
  action_id: Schema.String.pipe(Schema.minLength(1)),
  tool_results: Schema.optional(Schema.Array(ToolResult).pipe(Schema.maxItems(MAX_TOOLS)))
})
export type ApproveRequest = typeof ApproveRequest.Type

export const RejectRequest = Schema.Struct({ action_id: Schema.String.pipe(Schema.minLength(1)) })

export const RejectResponse = Schema.Struct({
  id: Schema.String,
  action_id: Schema.String,
  resolution: Schema.Literal("rejected"),
  status: Schema.Literal("completed")
}).annotations({ identifier: "SessionRejectResponse" })

export const DeletedSession = Schema.Struct({ id: Schema.String, deleted: Schema.Literal(true) }).annotations({
  identifier: "DeletedSession"
})
