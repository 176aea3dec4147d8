/**
 * Session state as a pure fold over the log: `apply(state, event)`. Rebuilding starts from the latest checkpoint
 * (a folded state stored every 50 turns) and applies the tail; `rebuild` with no checkpoint replays everything,
 * and both give the same state (test/sessions/state.test.ts). The state holds what the next model call needs:
 * the conversation so far, the open turn's request, and the actions of its latest model step.
 */
import type { ChatMessage, ChatRequest } from "../../layers/providers/types.ts"
import type { FunctionToolDefinition, SessionStatus } from "../../schemas/sessions.ts"
import {
  eventOf,
  type LogEvent,
  parsedArguments,
  type Resolution,
  type StepToolCall,
  type StepUsage,
  type StoredEvent,
  type TurnOutput,
  type TurnUsage
} from "./events.ts"

/** Turns between two checkpoints (§4.3 rule 2, §8). */
export const CHECKPOINT_EVERY_TURNS = 50

export type ActionStatus = "pending" | Resolution | "returned"

export interface ActionState {
  readonly actionId: string
  readonly callId: string
  readonly name: string
  readonly arguments: string
  readonly pauses: boolean
  /** `pending` waits for approve/reject; `returned` is a call the turn did not pause for. */
  readonly status: ActionStatus
  readonly output: string | null
}

export interface TurnState {
  readonly number: number
  readonly input: string
  readonly model: string
  readonly instructions: string | null
  readonly tools: ReadonlyArray<FunctionToolDefinition>
  readonly pauseOnToolCalls: boolean
  /** This turn's conversation so far: the user input, then each finished step's assistant and tool messages. */
  readonly messages: ReadonlyArray<ChatMessage>
  /** All output text of the turn. */
  readonly output: string
  /** The calls of the latest model step, until the next step or the turn's end turns them into tool messages. */
  readonly actions: ReadonlyArray<ActionState>
  readonly usage: StepUsage
  readonly cost: number
}

export interface SessionState {
  readonly id: string
  readonly agentId: string | null
  readonly metadata: Readonly<Record<string, unknown>>
  readonly status: SessionStatus
  readonly deleted: boolean
  readonly turnCount: number
  readonly totalCost: number
  readonly lastSequence: number
  readonly createdAt: string
  readonly updatedAt: string
  readonly lastActivityAt: string
  /** Messages of finished turns (failed turns leave none). */
  readonly history: ReadonlyArray<ChatMessage>
  /** The open turn (running or paused), if any. */
  readonly turn: TurnState | null
}

const roundUsd = (usd: number) => Math.round(usd * 1e8) / 1e8

const ZERO_USAGE: StepUsage = { input_tokens: 0, output_tokens: 0, cached_tokens: 0 }

export const turnUsage = (turn: TurnState): TurnUsage => ({
  input_tokens: turn.usage.input_tokens,
  output_tokens: turn.usage.output_tokens,
  cached_tokens: turn.usage.cached_tokens,
  total_tokens: turn.usage.input_tokens + turn.usage.output_tokens,
  cost: turn.cost
})

/** What the model is told for a call that has no client output. */
const toolOutput = (action: ActionState): string => {
  switch (action.status) {
    case "approved":
      return action.output ?? ""
    case "rejected":
      return "The user rejected this tool call."
    case "cancelled":
      return "Not run: another tool call of this step was rejected."
    case "pending":
    case "returned":
      return action.output ?? "No result: this call was returned to the client."
  }
}

export const toolMessages = (actions: ReadonlyArray<ActionState>): ReadonlyArray<ChatMessage> =>
  actions.map((action) => ({ role: "tool" as const, tool_call_id: action.callId, content: toolOutput(action) }))

/** Ends the latest step: its calls become tool messages in the turn's conversation. */
const closeStep = (turn: TurnState): TurnState =>
  turn.actions.length === 0 ? turn : { ...turn, messages: [...turn.messages, ...toolMessages(turn.actions)], actions: [] }

/** Approval rules 3 and 4 of §4.3. */
export const pausesFor = (
  name: string,
  tools: ReadonlyArray<FunctionToolDefinition>,
  pauseOnToolCalls: boolean
): boolean => {
  if (!pauseOnToolCalls) return false
  if (!tools.some((tool) => tool.needsApproval === true)) return true
  return tools.some((tool) => tool.function.name === name && tool.needsApproval === true)
}

/** The `output` of `turn.completed`: the text, plus the calls handed to the client when there are any. */
export const turnOutput = (turn: TurnState): TurnOutput => {
  const returned = turn.actions.filter((action) => action.status === "returned")
  if (returned.length === 0) return turn.output
  return {
    text: turn.output,
    tool_calls: returned.map((action) => ({
      action_id: action.actionId,
      call_id: action.callId,
      name: action.name,
      arguments: parsedArguments(action.arguments)
    }))
  }
}

const withTurn = (state: SessionState, f: (turn: TurnState) => TurnState): SessionState =>
  state.turn === null ? state : { ...state, turn: f(state.turn) }

const assistantMessage = (text: string, calls: ReadonlyArray<StepToolCall>): ChatMessage =>
  calls.length === 0
    ? { role: "assistant", content: text }
    : {
      role: "assistant",
      content: text === "" ? null : text,
      tool_calls: calls.map((call) => ({
        id: call.call_id,
        type: "function" as const,
        function: { name: call.name, arguments: call.arguments }
      }))
    }

export interface EventMeta {
  readonly sessionId: string
  readonly sequence: number
  readonly createdAt: string
}

/** The state after `event`. `state` is null only before `session.created`. */
export const apply = (state: SessionState | null, event: LogEvent, meta: EventMeta): SessionState => {
  if (state === null) {
    if (event.type !== "session.created") throw new Error(`session ${meta.sessionId}: log does not start with session.created`)
    return {
      id: meta.sessionId,
      agentId: event.agent_id,
      metadata: event.metadata,
      status: "active",
      deleted: false,
      turnCount: 0,
      totalCost: 0,
      lastSequence: meta.sequence,
      createdAt: meta.createdAt,
      updatedAt: meta.createdAt,
      lastActivityAt: meta.createdAt,
      history: [],
      turn: null
    }
  }
  const next = step(state, event)
  const active = event.type !== "session.completed" && event.type !== "session.deleted"
  return {
    ...next,
    lastSequence: meta.sequence,
    updatedAt: meta.createdAt,
    lastActivityAt: active ? meta.createdAt : next.lastActivityAt
  }
}

const step = (state: SessionState, event: LogEvent): SessionState => {
  switch (event.type) {
    case "session.created":
      return state
    case "turn.input":
      return {
        ...state,
        turn: {
          number: event.turn_number,
          input: event.input,
          model: event.model,
          instructions: event.instructions,
          tools: event.tools,
          pauseOnToolCalls: event.pause_on_tool_calls,
          messages: [{ role: "user", content: event.input }],
          output: "",
          actions: [],
          usage: ZERO_USAGE,
          cost: 0
        }
      }
    case "turn.started":
      return { ...state, turnCount: event.turn_number, status: "active" }
    case "response.output_text.delta":
      return withTurn(state, (turn) => ({ ...turn, output: turn.output + event.delta }))
    case "model.step":
      return withTurn(state, (turn) => {
        const closed = closeStep(turn)
        return {
          ...closed,
          messages: [...closed.messages, assistantMessage(event.text, event.tool_calls)],
          actions: event.tool_calls.map((call) => ({
            actionId: call.action_id,
            callId: call.call_id,
            name: call.name,
            arguments: call.arguments,
            pauses: call.pauses,
            status: call.pauses ? "pending" : "returned",
            output: null
          })),
          usage: {
            input_tokens: closed.usage.input_tokens + event.usage.input_tokens,
            output_tokens: closed.usage.output_tokens + event.usage.output_tokens,
            cached_tokens: closed.usage.cached_tokens + event.usage.cached_tokens
          },
          cost: roundUsd(closed.cost + event.cost)
        }
      })
    case "turn.paused":
      return { ...state, status: "paused" }
    case "tool.result":
      return withTurn(state, (turn) => ({
        ...turn,
        actions: turn.actions.map((action) =>
          action.actionId === event.action_id ? { ...action, output: event.output } : action
        )
      }))
    case "turn.resumed": {
      const resolved = withTurn(state, (turn) => ({
        ...turn,
        actions: turn.actions.map((action) =>
          action.actionId === event.action_id ? { ...action, status: event.resolution } : action
        )
      }))
      const stillPending = resolved.turn?.actions.some((action) => action.status === "pending") ?? false
      return { ...resolved, status: stillPending ? "paused" : "active" }
    }
    case "turn.completed": {
      if (state.turn === null) return state
      const closed = closeStep(state.turn)
      return {
        ...state,
        status: "active",
        history: [...state.history, ...closed.messages],
        totalCost: roundUsd(state.totalCost + closed.cost),
        turn: null
      }
    }
    case "turn.failed":
      return {
        ...state,
        status: state.status === "completed" ? "completed" : "active",
        totalCost: roundUsd(state.totalCost + (state.turn?.cost ?? 0)),
        turn: null
      }
    case "session.completed":
      return { ...state, status: "completed", turn: null }
    case "session.deleted":
      return { ...state, deleted: true }
  }
}

/** Folds stored rows onto `from` (a checkpoint's state, or null to replay from the first event). */
export const rebuild = (from: SessionState | null, rows: ReadonlyArray<StoredEvent>): SessionState | null => {
  let state = from
  for (const row of rows) {
    state = apply(state, eventOf(row), {
      sessionId: row.sessionId,
      sequence: row.sequence,
      createdAt: row.createdAt.toISOString()
    })
  }
  return state
}

/** Whether the batch ending at `after` crosses a multiple of 50 finished turns: write a checkpoint then. */
type Progress = Pick<SessionState, "turnCount"> & { readonly turn: object | null }

export const checkpointDue = (before: Progress | null, after: Progress): boolean => {
  const finished = (state: Progress | null) =>
    state === null ? 0 : state.turn === null ? state.turnCount : state.turnCount - 1
  return Math.floor(finished(after) / CHECKPOINT_EVERY_TURNS) > Math.floor(finished(before) / CHECKPOINT_EVERY_TURNS)
}

/** The chat request for the open turn's next model call. */
export const modelRequest = (state: SessionState, turn: TurnState): ChatRequest => ({
  model: turn.model,
  messages: [
    ...(turn.instructions !== null && turn.instructions !== "" ? [{ role: "system" as const, content: turn.instructions }] : []),
    ...state.history,
    ...turn.messages,
    ...toolMessages(turn.actions)
  ],
  ...(turn.tools.length > 0
    ? {
      tools: turn.tools.map((tool) => ({
        type: "function" as const,
        function: {
          name: tool.function.name,
          ...(tool.function.description !== undefined ? { description: tool.function.description } : {}),
          ...(tool.function.parameters !== undefined ? { parameters: tool.function.parameters } : {})
        }
      }))
    }
    : {}),
  stream: true,
  stream_options: { include_usage: true }
})
