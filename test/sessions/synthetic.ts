/** Builds long session logs directly through the service's event log (for checkpoint tests and the benchmark). */
import { Effect } from "effect"
import type { LogEvent } from "../../modules/sessions/events.ts"
import { Sessions } from "../../modules/sessions/Service.ts"
import type { SessionState } from "../../modules/sessions/state.ts"

/** The events of one finished turn: input, start, `deltas` text deltas, one model step, completion. */
export const turnEvents = (turnNumber: number, deltas: number): ReadonlyArray<LogEvent> => {
  const pieces = Array.from({ length: deltas }, (_, i) => `w${turnNumber}.${i} `)
  return [
    {
      type: "turn.input",
      turn_number: turnNumber,
      input: `question ${turnNumber}`,
      model: "gpt-4o-mini",
      instructions: turnNumber % 2 === 0 ? "Be brief." : null,
      tools: [],
      pause_on_tool_calls: true
    },
    { type: "turn.started", turn_number: turnNumber },
    ...pieces.map((delta): LogEvent => ({ type: "response.output_text.delta", delta })),
    {
      type: "model.step",
      turn_number: turnNumber,
      text: pieces.join(""),
      tool_calls: [],
      usage: { input_tokens: 10 * turnNumber, output_tokens: deltas, cached_tokens: 0 },
      cost: 0.00001234,
      model: "gpt-4o-mini",
      provider: "openai"
    },
    {
      type: "turn.completed",
      turn_number: turnNumber,
      output: pieces.join(""),
      usage: { input_tokens: 10 * turnNumber, output_tokens: deltas, cached_tokens: 0, total_tokens: 10 * turnNumber + deltas, cost: 0.00001234 }
    }
  ]
}

/** A paused turn: a model step with two tool calls, both pausing. */
export const pausedTurnEvents = (turnNumber: number): ReadonlyArray<LogEvent> => [
  { type: "turn.input", turn_number: turnNumber, input: "tools", model: "gpt-4o-mini", instructions: null, tools: [], pause_on_tool_calls: true },
  { type: "turn.started", turn_number: turnNumber },
  { type: "response.output_text.delta", delta: "Checking." },
  {
    type: "model.step",
    turn_number: turnNumber,
    text: "Checking.",
    tool_calls: [
      { action_id: `act_a${turnNumber}`, call_id: "call_a", name: "lookup", arguments: "{\"q\":1}", pauses: true },
      { action_id: `act_b${turnNumber}`, call_id: "call_b", name: "lookup", arguments: "{\"q\":2}", pauses: true }
    ],
    usage: { input_tokens: 5, output_tokens: 1, cached_tokens: 0 },
    cost: 0.000001,
    model: "gpt-4o-mini",
    provider: "openai"
  },
  { type: "turn.paused", reason: "approval_required", action_id: `act_a${turnNumber}`, tool: "lookup", arguments: { q: 1 } },
  { type: "turn.paused", reason: "approval_required", action_id: `act_b${turnNumber}`, tool: "lookup", arguments: { q: 2 } },
  { type: "tool.result", turn_number: turnNumber, action_id: `act_a${turnNumber}`, output: "one" },
  { type: "turn.resumed", action_id: `act_a${turnNumber}`, resolution: "approved" }
]

/** Creates a session of `projectId` and appends `turns` finished turns of `deltas` deltas each. */
export const buildSession = (projectId: string, turns: number, deltas: number) =>
  Effect.gen(function*() {
    const sessions = yield* Sessions
    const id = `sess_synthetic_${Math.random().toString(36).slice(2)}`
    let { state } = yield* sessions.log.append(id, null, [{ type: "session.created", agent_id: null, metadata: { synthetic: true } }], {
      owner: { projectId, endUser: null }
    })
    for (let n = 1; n <= turns; n++) {
      state = (yield* sessions.log.append(id, state, turnEvents(n, deltas))).state
    }
    return { id, state: state satisfies SessionState }
  })
