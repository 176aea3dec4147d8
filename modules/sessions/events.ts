/**
 * The session log's event types. Six of them are streamed to clients as SSE (§6.1 plus `turn.failed`); their
 * payload is exactly the SSE `data`. The others are kept in the log only: they carry what a rebuild needs (the
 * turn's request, each model step, tool results) without adding fields to the contract's events.
 */
import { Schema } from "effect"
import { FunctionToolDefinition } from "../../schemas/sessions.ts"

const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/** Tokens of one model call. */
export const StepUsage = Schema.Struct({
  input_tokens: Schema.Int,
  output_tokens: Schema.Int,
  cached_tokens: Schema.Int
})
export type StepUsage = typeof StepUsage.Type

/** `turn.completed.usage`: the turn's model calls added up, and their cost in USD. */
export const TurnUsage = Schema.Struct({
  input_tokens: Schema.Int,
  output_tokens: Schema.Int,
  cached_tokens: Schema.Int,
  total_tokens: Schema.Int,
  cost: Schema.Number
})
export type TurnUsage = typeof TurnUsage.Type

/** A tool call handed to the client: in `turn.completed.output` when the turn did not pause for it. */
export const ReturnedToolCall = Schema.Struct({
  action_id: Schema.String,
  call_id: Schema.String,
  name: Schema.String,
  /** The arguments as JSON (the model's raw text when it is not valid JSON). */
  arguments: Schema.Unknown
})

export const TurnOutput = Schema.Union(
  Schema.String,
  Schema.Struct({ text: Schema.String, tool_calls: Schema.Array(ReturnedToolCall) })
)
export type TurnOutput = typeof TurnOutput.Type

export const StepToolCall = Schema.Struct({
  action_id: Schema.String,
  call_id: Schema.String,
  name: Schema.String,
  /** JSON text as the model produced it. */
  arguments: Schema.String,
  /** Whether the turn pauses for this call (approval rules 3 and 4). */
  pauses: Schema.Boolean
})
export type StepToolCall = typeof StepToolCall.Type

export const Resolution = Schema.Literal("approved", "rejected", "cancelled")
export type Resolution = typeof Resolution.Type

const event = <T extends string, F extends Schema.Struct.Fields>(type: T, fields: F) =>
  Schema.Struct({ type: Schema.Literal(type), ...fields })

export const SessionCreated = event("session.created", {
  agent_id: Schema.NullOr(Schema.String),
  metadata: JsonObject
})
export const TurnInput = event("turn.input", {
  turn_number: Schema.Int,
  input: Schema.String,
  model: Schema.String,
  instructions: Schema.NullOr(Schema.String),
  tools: Schema.Array(FunctionToolDefinition),
  pause_on_tool_calls: Schema.Boolean
})
export const TurnStarted = event("turn.started", { turn_number: Schema.Int })
export const OutputTextDelta = event("response.output_text.delta", { delta: Schema.String })
export const ModelStep = event("model.step", {
  turn_number: Schema.Int,
  text: Schema.String,
  tool_calls: Schema.Array(StepToolCall),
  usage: StepUsage,
  cost: Schema.Number,
  model: Schema.String,
  provider: Schema.String
})
export const TurnPaused = event("turn.paused", {
  reason: Schema.Literal("approval_required"),
  action_id: Schema.String,
  tool: Schema.String,
  arguments: Schema.Unknown
})
export const ToolResultRecorded = event("tool.result", {
  turn_number: Schema.Int,
  action_id: Schema.String,
  output: Schema.String
})
export const TurnResumed = event("turn.resumed", { action_id: Schema.String, resolution: Resolution })
export const TurnCompleted = event("turn.completed", {
  turn_number: Schema.Int,
  output: TurnOutput,
  usage: TurnUsage
})
export const TurnFailed = event("turn.failed", {
  turn_number: Schema.Int,
  error: Schema.Struct({ code: Schema.String, message: Schema.String })
})
export const SessionCompleted = event("session.completed", { reason: Schema.Literal("expired") })
export const SessionDeleted = event("session.deleted", {})

export const LogEvent = Schema.Union(
  SessionCreated,
  TurnInput,
  TurnStarted,
  OutputTextDelta,
  ModelStep,
  TurnPaused,
  ToolResultRecorded,
  TurnResumed,
  TurnCompleted,
  TurnFailed,
  SessionCompleted,
  SessionDeleted
)
export type LogEvent = typeof LogEvent.Type
export type LogEventType = LogEvent["type"]

/** The event types a client sees on the SSE streams. */
export const STREAMED: ReadonlySet<string> = new Set<LogEventType>([
  "turn.started",
  "response.output_text.delta",
  "turn.paused",
  "turn.resumed",
  "turn.completed",
  "turn.failed"
])

/** An event as stored: its place in the log and its payload (the event without `type`). */
export interface StoredEvent {
  readonly id: string
  readonly sessionId: string
  readonly turnNumber: number
  readonly sequence: number
  readonly type: string
  readonly payload: Readonly<Record<string, unknown>>
  readonly createdAt: Date
}

export const payloadOf = (event: LogEvent): Record<string, unknown> => {
  const { type: _type, ...payload } = event
  return payload
}

const decodeEvent = Schema.decodeUnknownSync(LogEvent)

/** The typed event of a stored row (the log only holds what `payloadOf` wrote). */
export const eventOf = (row: StoredEvent): LogEvent => decodeEvent({ ...row.payload, type: row.type })

/** Parses a tool call's JSON arguments for clients; keeps the raw text when it is not JSON. */
export const parsedArguments = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}
