/** OpenAI-compatible adapter: request and response mapping, checked on the fake's captured requests. */
import { expect, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { afterAll, beforeAll, beforeEach } from "vitest"
import { ProviderAdaptersLive } from "../../layers/providers/Service.ts"
import type { ChatRequest } from "../../layers/providers/types.ts"
import { startOpenAIFake } from "../fakes/openai.ts"
import type { FakeUpstream } from "../fakes/upstream.ts"
import { API_KEYS, assemble, chat, complete, streamAll, targetFor } from "./helpers.ts"

const weatherTool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Weather for a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] }
  }
} as const

const toolHistory: ChatRequest["messages"] = [
  { role: "system", content: "Be brief." },
  { role: "user", content: [{ type: "text", text: "Weather here?" }, { type: "image_url", image_url: { url: "https://img.test/a.png", detail: "low" } }] },
  { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Paris\"}" } }] },
  { role: "tool", tool_call_id: "call_1", content: "{\"temp\":21}" }
]

layer(ProviderAdaptersLive)("openai adapter", (it) => {
  let fake: FakeUpstream
  beforeAll(async () => {
    fake = await startOpenAIFake({ apiKey: API_KEYS.openai })
  })
  afterAll(() => fake.close())
  beforeEach(() => fake.reset())

  it.effect("sends POST {base}/chat/completions with Bearer auth and the target's model", () =>
    Effect.gen(function*() {
      yield* complete(targetFor(fake, { extraHeaders: { "x-tenant": "t1" } }), chat())
      const sent = fake.lastRequest()!
      expect(sent.method).toBe("POST")
      expect(sent.path).toBe("/v1/chat/completions")
      expect(sent.headers.authorization).toBe(`Bearer ${API_KEYS.openai}`)
      expect(sent.headers["content-type"]).toContain("application/json")
      expect(sent.headers["x-tenant"]).toBe("t1")
      expect(sent.body).toEqual({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Hello" }] })
    }))

  it.effect("a target without a key sends no Authorization header (local servers)", () =>
    Effect.gen(function*() {
      const local = yield* Effect.promise(() => startOpenAIFake())
      yield* complete(targetFor(local, { apiKey: Option.none() }), chat())
      expect(local.lastRequest()!.headers.authorization).toBeUndefined()
      yield* Effect.promise(() => local.close())
    }))

  it.effect("passes messages, images, tools and sampling fields through and drops nulls", () =>
    Effect.gen(function*() {
      yield* complete(
        targetFor(fake),
        chat({
          messages: toolHistory,
          tools: [weatherTool],
          tool_choice: { type: "function", function: { name: "get_weather" } },
          temperature: 0.2,
          top_p: null,
          max_completion_tokens: 64,
          stop: ["END"],
          response_format: { type: "json_object" },
          seed: 7,
          user: "u-1"
        })
      )
      expect(fake.lastRequest()!.body).toEqual({
        model: "gpt-4o-mini",
        messages: toolHistory,
        tools: [weatherTool],
        tool_choice: { type: "function", function: { name: "get_weather" } },
        temperature: 0.2,
        max_completion_tokens: 64,
        stop: ["END"],
        response_format: { type: "json_object" },
        seed: 7,
        user: "u-1"
      })
    }))

  it.effect("a text answer maps to content, finish reason and usage with cached tokens", () =>
    Effect.gen(function*() {
      fake.enqueue({ text: "Hi there", model: "gpt-4o-mini-2024-07-18", usage: { promptTokens: 12, completionTokens: 2, cachedTokens: 8 } })
      const result = yield* complete(targetFor(fake), chat())
      expect(result).toEqual({
        id: expect.stringMatching(/^chatcmpl-/),
        model: "gpt-4o-mini-2024-07-18",
        content: "Hi there",
        toolCalls: [],
        finishReason: "stop",
        usage: { promptTokens: 12, completionTokens: 2, cachedTokens: 8 }
      })
    }))

  it.effect("a tool-call answer maps to toolCalls with id, name and JSON arguments", () =>
    Effect.gen(function*() {
      fake.enqueue({ toolCalls: [{ id: "call_a", name: "get_weather", arguments: { city: "Paris" } }, { id: "call_b", name: "get_time", arguments: "{}" }] })
      const result = yield* complete(targetFor(fake), chat({ tools: [weatherTool] }))
      expect(result.content).toBeNull()
      expect(result.finishReason).toBe("tool_calls")
      expect(result.toolCalls).toEqual([
        { id: "call_a", name: "get_weather", arguments: "{\"city\":\"Paris\"}" },
        { id: "call_b", name: "get_time", arguments: "{}" }
      ])
    }))

  it.effect("streaming asks for usage and yields text deltas, then finish, then usage", () =>
    Effect.gen(function*() {
      fake.enqueue({ text: ["Hel", "lo", " world"], usage: { promptTokens: 5, completionTokens: 3, cachedTokens: 1 } })
      const deltas = yield* streamAll(targetFor(fake), chat({ stream: false, stream_options: { include_usage: false } }))
      expect(fake.lastRequest()!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } })
      expect(fake.lastRequest()!.headers.accept).toBe("text/event-stream")
      expect(deltas).toEqual([
        { type: "text", text: "Hel" },
        { type: "text", text: "lo" },
        { type: "text", text: " world" },
        { type: "finish", reason: "stop" },
        { type: "usage", promptTokens: 5, completionTokens: 3, cachedTokens: 1 }
      ])
    }))

  it.effect("streamed tool calls arrive as indexed pieces that join into whole calls", () =>
    Effect.gen(function*() {
      fake.enqueue({ toolCalls: [{ id: "call_x", name: "get_weather", arguments: { city: "Lagos" } }, { id: "call_y", name: "get_time", arguments: { tz: "UTC" } }] })
      const deltas = yield* streamAll(targetFor(fake), chat({ tools: [weatherTool] }))
      const first = deltas.find((d) => d.type === "tool_call")
      expect(first).toEqual({ type: "tool_call", index: 0, id: "call_x", name: "get_weather", arguments: "" })
      const joined = assemble(deltas)
      expect(joined.calls).toEqual([
        { id: "call_x", name: "get_weather", arguments: "{\"city\":\"Lagos\"}" },
        { id: "call_y", name: "get_time", arguments: "{\"tz\":\"UTC\"}" }
      ])
      expect(joined.finish).toBe("tool_calls")
    }))

  it.effect("a compatible server that ignores stream: true and answers JSON still yields deltas", () =>
    Effect.gen(function*() {
      fake.enqueue({
        rawBody: {
          id: "chatcmpl-1",
          model: "local-llm",
          choices: [{ index: 0, message: { role: "assistant", content: "whole answer" }, finish_reason: "stop" }],
          usage: { prompt_tokens: 4, completion_tokens: 2 }
        }
      })
      expect(yield* streamAll(targetFor(fake), chat())).toEqual([
        { type: "text", text: "whole answer" },
        { type: "finish", reason: "stop" },
        { type: "usage", promptTokens: 4, completionTokens: 2, cachedTokens: 0 }
      ])
    }))

  it.effect("an image chat gets the fake's echo (the fake accepts image parts)", () =>
    Effect.gen(function*() {
      const result = yield* complete(
        targetFor(fake),
        chat({
          messages: [{
            role: "user",
            content: [
              { type: "text", text: "What is this?" },
              { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } }
            ]
          }]
        })
      )
      expect(result.content).toBe("echo: What is this? [1 image]")
    }))

  it.effect("the fake lists models at GET /v1/models", () =>
    Effect.gen(function*() {
      const res = yield* Effect.promise(() => fetch(`${fake.baseUrl}/models`).then((r) => r.json()))
      expect(res).toEqual({ object: "list", data: expect.arrayContaining([expect.objectContaining({ id: "gpt-4o-mini", object: "model" })]) })
    }))
})
