/** Shared bits of the adapter tests: a target pointing at a fake, and running calls. */
import { Chunk, Effect, Either, Option, Redacted, Stream } from "effect"
import { ProviderAdapters } from "../../layers/providers/Service.ts"
import type { ChatDelta, ChatRequest, UpstreamError, UpstreamTarget } from "../../layers/providers/types.ts"
import type { FakeUpstream } from "../fakes/upstream.ts"

export const API_KEYS = { openai: "sk-test-openai", anthropic: "sk-ant-test", google: "g-test-key" } as const

export const UPSTREAM_MODELS = { openai: "gpt-4o-mini", anthropic: "claude-sonnet-4-5", google: "gemini-2.0-flash" } as const

export const targetFor = (fake: FakeUpstream, overrides: Partial<UpstreamTarget> = {}): UpstreamTarget => ({
  family: fake.family,
  baseUrl: fake.baseUrl,
  apiKey: Option.some(Redacted.make(API_KEYS[fake.family])),
  model: UPSTREAM_MODELS[fake.family],
  timeoutMs: 5_000,
  ...overrides
})

export const chat = (overrides: Partial<ChatRequest> = {}): ChatRequest => ({
  model: "whatever-the-caller-asked",
  messages: [{ role: "user", content: "Hello" }],
  ...overrides
})

export const complete = (target: UpstreamTarget, request: ChatRequest) =>
  Effect.flatMap(ProviderAdapters, (adapters) => adapters.complete(target, request))

export const streamAll = (target: UpstreamTarget, request: ChatRequest) =>
  Effect.flatMap(ProviderAdapters, (adapters) => Stream.runCollect(adapters.stream(target, request))).pipe(
    Effect.map(Chunk.toReadonlyArray)
  )

/** The error of a failed call (fails the test when it succeeded). */
export const failure = <A, R>(effect: Effect.Effect<A, UpstreamError, R>) =>
  Effect.either(effect).pipe(
    Effect.flatMap((result) =>
      Either.isLeft(result) ? Effect.succeed(result.left) : Effect.dieMessage(`expected a failure, got ${JSON.stringify(result.right)}`)
    )
  )

/** Joins a delta stream back into text, tool calls (by index), the finish reason and usage. */
export const assemble = (deltas: ReadonlyArray<ChatDelta>) => {
  let text = ""
  const calls: Array<{ id?: string; name?: string; arguments: string }> = []
  let finish: string | undefined
  let usage: { promptTokens: number; completionTokens: number; cachedTokens: number } | undefined
  for (const delta of deltas) {
    switch (delta.type) {
      case "text":
        text += delta.text
        break
      case "tool_call": {
        const call = calls[delta.index] ?? { arguments: "" }
        if (delta.id !== undefined) call.id = delta.id
        if (delta.name !== undefined) call.name = delta.name
        call.arguments += delta.arguments
        calls[delta.index] = call
        break
      }
      case "finish":
        finish = delta.reason
        break
      case "usage":
        usage = { promptTokens: delta.promptTokens, completionTokens: delta.completionTokens, cachedTokens: delta.cachedTokens }
        break
    }
  }
  return { text, calls, finish, usage }
}

/** Polls (real time) until `check` holds. */
export const until = async (check: () => boolean, timeoutMs = 5000): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met in time")
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}
