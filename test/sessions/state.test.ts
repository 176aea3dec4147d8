/**
 * Event sourcing: state rebuilt from the latest checkpoint plus the tail equals state rebuilt from the whole
 * log; checkpoints every 50 turns; the projection row agrees with the fold; the approval rules as a function.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { webhookEventsOf } from "../../modules/sessions/EventLog.ts"
import { Sessions } from "../../modules/sessions/Service.ts"
import { checkpointDue, pausesFor } from "../../modules/sessions/state.ts"
import { createSession, type Env, getSession, startSessionsEnv, turn } from "./helpers.ts"
import { buildSession, pausedTurnEvents } from "./synthetic.ts"

let env: Env
beforeAll(async () => {
  env = await startSessionsEnv()
})
afterAll(() => env?.close())

const rebuilt = (id: string) =>
  env.gw.run(Effect.gen(function*() {
    const sessions = yield* Sessions
    const fromCheckpoint = Option.getOrThrow(yield* sessions.log.load(id))
    const fromScratch = Option.getOrThrow(yield* sessions.log.replay(id))
    return { fromCheckpoint, fromScratch }
  }))

const checkpoints = (id: string) =>
  env.gw.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<{ sequence: number; turn_count: number }>`
      SELECT sequence, turn_count FROM session_checkpoints WHERE session_id = ${id} ORDER BY sequence`
  }))

describe("approval rules as a function (§4.3 rules 3 and 4)", () => {
  const a = { type: "function" as const, function: { name: "a" } }
  const b = { type: "function" as const, function: { name: "b" }, needsApproval: true }
  it("pause on: with no needsApproval every tool pauses; with one, only those", () => {
    expect(pausesFor("a", [a], true)).toBe(true)
    expect(pausesFor("a", [a, b], true)).toBe(false)
    expect(pausesFor("b", [a, b], true)).toBe(true)
  })
  it("pause off: nothing pauses, needsApproval is ignored", () => {
    expect(pausesFor("a", [a], false)).toBe(false)
    expect(pausesFor("b", [a, b], false)).toBe(false)
  })
})

describe("checkpoints", () => {
  it("a checkpoint is due when the finished turns cross a multiple of 50", () => {
    const at = (turnCount: number, open: boolean) => ({ turnCount, turn: open ? {} : null })
    expect(checkpointDue(at(49, false), at(49, true))).toBe(false)
    expect(checkpointDue(at(50, true), at(50, false))).toBe(true)
    expect(checkpointDue(at(50, false), at(51, true))).toBe(false)
    expect(checkpointDue(at(99, false), at(100, false))).toBe(true)
  })

  it("are written every 50 turns; checkpoint + tail rebuilds the same state as the whole log", async () => {
    const { id, state } = await env.gw.run(buildSession(env.gw.project.id, 120, 5))
    expect((await checkpoints(id)).map((c) => c.turn_count)).toEqual([50, 100])
    const { fromCheckpoint, fromScratch } = await rebuilt(id)
    expect(fromCheckpoint).toEqual(fromScratch)
    expect(fromScratch).toEqual(JSON.parse(JSON.stringify(state)))
    expect(fromScratch.turnCount).toBe(120)
    expect(fromScratch.history).toHaveLength(240)

    // Still equal with a paused turn open after the last checkpoint, half approved.
    await env.gw.run(Effect.gen(function*() {
      const sessions = yield* Sessions
      yield* sessions.log.append(id, fromScratch, pausedTurnEvents(121))
    }))
    const open = await rebuilt(id)
    expect(open.fromCheckpoint).toEqual(open.fromScratch)
    expect(open.fromScratch.status).toBe("paused")
    expect(open.fromScratch.turn?.actions.map((a) => a.status)).toEqual(["approved", "pending"])

    // The projection row (what get and list read) agrees with the fold.
    const row = (await getSession(env.gw, id)).body as { status: string; turn_count: number; total_cost: number; updated_at: string }
    expect(row).toMatchObject({ status: "paused", turn_count: 121 })
    expect(row.total_cost).toBeCloseTo(open.fromScratch.totalCost, 10)
    expect(row.updated_at).toBe(open.fromScratch.updatedAt)
  })

  it("real turns through the server write the checkpoint at turn 50, and rebuilds agree", async () => {
    const session = await createSession(env.gw)
    for (let n = 1; n <= 50; n++) await turn(env.gw, session.id, { input: `message ${n}` })
    expect((await checkpoints(session.id)).map((c) => c.turn_count)).toEqual([50])
    const { fromCheckpoint, fromScratch } = await rebuilt(session.id)
    expect(fromCheckpoint).toEqual(fromScratch)
    expect(fromScratch.history).toHaveLength(100)
    expect(fromScratch.history.at(-1)).toEqual({ role: "assistant", content: "echo: message 50" })
    // The 51st turn starts from the rebuilt state: the model sees the whole conversation.
    await turn(env.gw, session.id, { input: "message 51" })
    expect((env.openai.lastRequest()!.body as { messages: unknown[] }).messages).toHaveLength(101)
  })

  it("rebuilding a 10,000-event session stays fast (see BENCHMARKS-sessions.md for numbers)", async () => {
    const { id } = await env.gw.run(buildSession(env.gw.project.id, 100, 96))
    const timed = async (label: "load" | "replay") => {
      const started = performance.now()
      await env.gw.run(Effect.flatMap(Sessions, (s) => s.log[label](id)))
      return performance.now() - started
    }
    const total = await env.gw.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return (yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM session_events WHERE session_id = ${id}`)[0]!.n
    }))
    expect(total).toBe(10_001)
    const replay = await timed("replay")
    const load = await timed("load")
    expect(replay).toBeLessThan(5000)
    expect(load).toBeLessThan(replay)
  })
})

describe("webhook events", () => {
  it("an append names the session webhook events it produces, for the integration point inside its transaction", async () => {
    const session = await createSession(env.gw)
    env.openai.enqueue({ toolCalls: [{ name: "lookup", arguments: {} }] })
    await turn(env.gw, session.id, { input: "x", tools: [{ type: "function", function: { name: "lookup" } }] })
    const state = await rebuilt(session.id)
    const rows = await env.gw.run(Effect.flatMap(Sessions, (s) => s.log.repo.allEventsAfter(session.id, 0)))
    expect(webhookEventsOf(state.fromScratch, rows).map((e) => e.type)).toEqual(["session.created", "session.paused"])
    expect(webhookEventsOf(state.fromScratch, rows)[1]!.data).toMatchObject({
      session_id: session.id,
      turn_number: 1,
      status: "paused",
      reason: "approval_required",
      tool: "lookup"
    })
  })
})
