/** Anthropic Messages adapter: request and response mapping, checked on the fake's captured requests. */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { afterAll, beforeAll, beforeEach } from "vitest"
import { ProviderAdaptersLive } from "../../layers/providers/Service.ts"
import { startAnthropicFake } from "../fakes/anthropic.ts"
import type { FakeUpstream } from "../fakes/upstream.ts"
import { API_KEYS, assemble, chat, complete, failure, streamAll, targetFor } from "./helpers.ts"

const lookupTool = {
  type: "function",
  function: { name: "lookup", description: "Look a word up", parameters: { type: "object", properties: { q: { type: "string" } } } }
} as const

layer(ProviderAdaptersLive)("anthropic adapter", (it) => {
  let fake: FakeUpstream
  beforeAll(async () => {
    fake = await startAnthropicFake({ apiKey: API_KEYS.anthropic })
  })
  afterAll(() => fake.close())
  beforeEach(() => fake.reset())

  it.effect("sends POST {base}/messages with x-api-key, anthropic-version and a default max_tokens", () =>
    Effect.gen(function*() {
      yield* complete(targetFor(fake), chat())
      const sent = fake.lastRequest()!
      expect(sent.path).toBe("/v1/messages")
      expect(sent.headers["x-api-key"]).toBe(API_KEYS.anthropic)
      expect(sent.headers["anthropic-version"]).toBe("2023-06-01")
      expect(sent.headers.authorization).toBeUndefined()
      expect(sent.body).toEqual({
        model: "claude-sonnet-4-5",
        max_tokens: 4096,
        messages: [{ role: "user", content: [{ type: "text", text: "Hello" }] }]
      })
    }))

  it.effect("system and developer messages become system; sampling fields map to Anthropic names", () =>
    Effect.gen(function*() {
      yield* complete(
        targetFor(fake),
        chat({
          messages: [
            { role: "system", content: "Be brief." },
            { role: "developer", content: [{ type: "text", text: "Answer in French." }] },
            { role: "user", content: "Hi" }
          ],
          max_tokens: 100,
          max_completion_tokens: 50,
          temperature: 0.5,
          top_p: 0.9,
          stop: "END",
          user: "user-42"
        })
      )
      expect(fake.lastRequest()!.body).toEqual({
        model: "claude-sonnet-4-5",
        system: "Be brief.\n\nAnswer in French.",
        max_tokens: 50,
        temperature: 0.5,
        top_p: 0.9,
        stop_sequences: ["END"],
        metadata: { user_id: "user-42" },
        messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }]
      })
    }))

  it.effect("a data: image becomes a base64 source and an https image a url source", () =>
    Effect.gen(function*() {
      const result = yield* complete(
        targetFor(fake),
        chat({
          messages: [{
            role: "user",
            content: [
              { type: "text", text: "Compare" },
              { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
              { type: "image_url", image_url: { url: "https://img.test/cat.webp", detail: "high" } }
            ]
          }]
        })
      )
      expect(fake.lastRequest()!.body).toMatchObject({
        messages: [{
          role: "user",
          content: [
            { type: "text", text: "Compare" },
            { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
            { type: "image", source: { type: "url", url: "https://img.test/cat.webp" } }
          ]
        }]
      })
      expect(result.content).toBe("echo: Compare [2 images]")
    }))

  it.effect("tool calls become tool_use blocks and tool messages one user turn of tool_result blocks", () =>
    Effect.gen(function*() {
      yield* complete(
        targetFor(fake),
        chat({
          messages: [
            { role: "user", content: "Define two words" },
            {
              role: "assistant",
              content: "Looking up.",
              tool_calls: [
                { id: "toolu_1", type: "function", function: { name: "lookup", arguments: "{\"q\":\"a\"}" } },
                { id: "toolu_2", type: "function", function: { name: "lookup", arguments: "" } }
              ]
            },
            { role: "tool", tool_call_id: "toolu_1", content: "first" },
            { role: "tool", tool_call_id: "toolu_2", content: [{ type: "text", text: "second" }] },
            { role: "user", content: "Thanks" }
          ],
          tools: [lookupTool, { type: "function", function: { name: "noop" } }],
          tool_choice: "required",
          parallel_tool_calls: false
        })
      )
      expect(fake.lastRequest()!.body).toMatchObject({
        messages: [
          { role: "user", content: [{ type: "text", text: "Define two words" }] },
          {
            role: "assistant",
            content: [
              { type: "text", text: "Looking up." },
              { type: "tool_use", id: "toolu_1", name: "lookup", input: { q: "a" } },
              { type: "tool_use", id: "toolu_2", name: "lookup", input: {} }
            ]
          },
          {
            role: "user",
            content: [
              { type: "tool_result", tool_use_id: "toolu_1", content: "first" },
              { type: "tool_result", tool_use_id: "toolu_2", content: "second" },
              { type: "text", text: "Thanks" }
            ]
          }
        ],
        tools: [
          { name: "lookup", description: "Look a word up", input_schema: lookupTool.function.parameters },
          { name: "noop", input_schema: { type: "object", properties: {} } }
        ],
        tool_choice: { type: "any", disable_parallel_tool_use: true }
      })
    }))

  it.effect("tool_choice none, auto and a named function map to Anthropic's forms", () =>
    Effect.gen(function*() {
      const choiceFor = (tool_choice: "none" | "auto" | { type: "function"; function: { name: string } }) =>
        complete(targetFor(fake), chat({ tools: [lookupTool], tool_choice })).pipe(
          Effect.map(() => (fake.lastRequest()!.body as { tool_choice?: unknown }).tool_choice)
        )
      expect(yield* choiceFor("none")).toEqual({ type: "none" })
      expect(yield* choiceFor("auto")).toEqual({ type: "auto" })
      expect(yield* choiceFor({ type: "function", function: { name: "lookup" } })).toEqual({ type: "tool", name: "lookup" })
    }))

  it.effect("tool-call arguments that are not a JSON object are refused before any upstream call", () =>
    Effect.gen(function*() {
      const error = yield* failure(
        complete(
          targetFor(fake),
          chat({
            messages: [
              { role: "user", content: "x" },
              { role: "assistant", tool_calls: [{ id: "t1", type: "function", function: { name: "lookup", arguments: "[1,2" } }] }
            ]
          })
        )
      )
      expect(error).toMatchObject({ kind: "request", status: 400, retryable: false })
      expect(fake.requestCount).toBe(0)
    }))

  it.effect("a text and tool_use answer maps to content, toolCalls, tool_calls finish and usage with cache reads", () =>
    Effect.gen(function*() {
      fake.enqueue({
        text: "Let me look.",
        toolCalls: [{ id: "toolu_9", name: "lookup", arguments: { q: "word" } }],
        usage: { promptTokens: 120, completionTokens: 15, cachedTokens: 100 }
      })
      const result = yield* complete(targetFor(fake), chat({ tools: [lookupTool] }))
      expect(result).toEqual({
        id: expect.stringMatching(/^msg_/),
        model: "claude-sonnet-4-5",
        content: "Let me look.",
        toolCalls: [{ id: "toolu_9", name: "lookup", arguments: "{\"q\":\"word\"}" }],
        finishReason: "tool_calls",
        usage: { promptTokens: 120, completionTokens: 15, cachedTokens: 100 }
      })
    }))

  it.effect("max_tokens and refusal stop reasons map to length and content_filter", () =>
    Effect.gen(function*() {
      fake.enqueue({ text: "cut", finishReason: "length" }, { text: "no", finishReason: "content_filter" })
      expect((yield* complete(targetFor(fake), chat())).finishReason).toBe("length")
      expect((yield* complete(targetFor(fake), chat())).finishReason).toBe("content_filter")
    }))

  it.effect("streaming reads event: lines into text deltas, then finish, then usage", () =>
    Effect.gen(function*() {
      fake.enqueue({ text: ["Bon", "jour"], usage: { promptTokens: 30, completionTokens: 2, cachedTokens: 20 } })
      const deltas = yield* streamAll(targetFor(fake), chat())
      expect(fake.lastRequest()!.body).toMatchObject({ stream: true })
      expect(fake.lastRequest()!.rawBody).not.toContain("stream_options")
      expect(deltas).toEqual([
        { type: "text", text: "Bon" },
        { type: "text", text: "jour" },
        { type: "finish", reason: "stop" },
        { type: "usage", promptTokens: 30, completionTokens: 2, cachedTokens: 20 }
      ])
    }))

  it.effect("streamed tool_use blocks become tool-call deltas indexed by tool, not by content block", () =>
    Effect.gen(function*() {
      fake.enqueue({
        text: ["Checking"],
        toolCalls: [{ id: "toolu_a", name: "lookup", arguments: { q: "one" } }, { id: "toolu_b", name: "lookup", arguments: { q: "two" } }]
      })
      const deltas = yield* streamAll(targetFor(fake), chat({ tools: [lookupTool] }))
      expect(deltas.filter((d) => d.type === "tool_call")[0]).toEqual({ type: "tool_call", index: 0, id: "toolu_a", name: "lookup", arguments: "" })
      const joined = assemble(deltas)
      expect(joined.text).toBe("Checking")
      expect(joined.calls).toEqual([
        { id: "toolu_a", name: "lookup", arguments: "{\"q\":\"one\"}" },
        { id: "toolu_b", name: "lookup", arguments: "{\"q\":\"two\"}" }
      ])
      expect(joined.finish).toBe("tool_calls")
    }))

  it.effect("an overloaded error event inside a stream is a retryable 529", () =>
    Effect.gen(function*() {
      fake.enqueue({ text: ["x"], streamError: { type: "overloaded_error", message: "Overloaded" } })
      const error = yield* failure(streamAll(targetFor(fake), chat()))
      expect(error).toMatchObject({ kind: "http", status: 529, code: "overloaded_error", retryable: true })
    }))

  it.effect("the fake lists models at GET /v1/models", () =>
    Effect.gen(function*() {
      const res = yield* Effect.promise(() => fetch(`${fake.baseUrl}/models`).then((r) => r.json()))
      expect(res).toMatchObject({ data: expect.arrayContaining([expect.objectContaining({ type: "model", id: "claude-sonnet-4-5" })]), has_more: false })
    }))
})
