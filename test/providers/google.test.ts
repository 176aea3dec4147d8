/** Gemini adapter: request and response mapping, checked on the fake's captured requests. */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { afterAll, beforeAll, beforeEach } from "vitest"
import { ProviderAdaptersLive } from "../../layers/providers/Service.ts"
import { startGoogleFake } from "../fakes/google.ts"
import type { FakeUpstream } from "../fakes/upstream.ts"
import { API_KEYS, assemble, chat, complete, failure, streamAll, targetFor } from "./helpers.ts"

const lookupTool = {
  type: "function",
  function: {
    name: "lookup",
    description: "Look a word up",
    parameters: { type: "object", properties: { q: { type: "string" } }, additionalProperties: false }
  }
} as const

layer(ProviderAdaptersLive)("google adapter", (it) => {
  let fake: FakeUpstream
  beforeAll(async () => {
    fake = await startGoogleFake({ apiKey: API_KEYS.google })
  })
  afterAll(() => fake.close())
  beforeEach(() => fake.reset())

  it.effect("sends POST {base}/models/{model}:generateContent with x-goog-api-key", () =>
    Effect.gen(function*() {
      yield* complete(targetFor(fake), chat())
      const sent = fake.lastRequest()!
      expect(sent.path).toBe("/v1beta/models/gemini-2.0-flash:generateContent")
      expect(sent.headers["x-goog-api-key"]).toBe(API_KEYS.google)
      expect(sent.body).toEqual({ contents: [{ role: "user", parts: [{ text: "Hello" }] }] })
    }))

  it.effect("system messages become systemInstruction and sampling fields generationConfig", () =>
    Effect.gen(function*() {
      yield* complete(
        targetFor(fake),
        chat({
          messages: [
            { role: "system", content: "Be brief." },
            { role: "developer", content: "Use JSON." },
            { role: "user", content: "Hi" },
            { role: "assistant", content: "Hello!" },
            { role: "user", content: "Again" }
          ],
          temperature: 0.3,
          top_p: 0.8,
          max_tokens: 77,
          stop: ["END"],
          seed: 3,
          response_format: { type: "json_schema", json_schema: { name: "x", schema: { type: "object" } } }
        })
      )
      expect(fake.lastRequest()!.body).toEqual({
        systemInstruction: { parts: [{ text: "Be brief.\n\nUse JSON." }] },
        contents: [
          { role: "user", parts: [{ text: "Hi" }] },
          { role: "model", parts: [{ text: "Hello!" }] },
          { role: "user", parts: [{ text: "Again" }] }
        ],
        generationConfig: {
          temperature: 0.3,
          topP: 0.8,
          maxOutputTokens: 77,
          stopSequences: ["END"],
          seed: 3,
          responseMimeType: "application/json",
          responseJsonSchema: { type: "object" }
        }
      })
    }))

  it.effect("a data: image becomes inlineData and an https image fileData with a guessed type", () =>
    Effect.gen(function*() {
      const result = yield* complete(
        targetFor(fake),
        chat({
          messages: [{
            role: "user",
            content: [
              { type: "text", text: "Describe" },
              { type: "image_url", image_url: { url: "data:image/jpeg;base64,/9j/4AAQ" } },
              { type: "image_url", image_url: { url: "https://img.test/photo.PNG?x=1" } }
            ]
          }]
        })
      )
      expect(fake.lastRequest()!.body).toMatchObject({
        contents: [{
          role: "user",
          parts: [
            { text: "Describe" },
            { inlineData: { mimeType: "image/jpeg", data: "/9j/4AAQ" } },
            { fileData: { mimeType: "image/png", fileUri: "https://img.test/photo.PNG?x=1" } }
          ]
        }]
      })
      expect(result.content).toBe("echo: Describe [2 images]")
    }))

  it.effect("tool calls become functionCall parts and tool messages functionResponse parts named by the call", () =>
    Effect.gen(function*() {
      yield* complete(
        targetFor(fake),
        chat({
          messages: [
            { role: "user", content: "Define" },
            { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "lookup", arguments: "{\"q\":\"a\"}" } }] },
            { role: "tool", tool_call_id: "call_1", content: "{\"definition\":\"first letter\"}" },
            { role: "assistant", tool_calls: [{ id: "call_2", type: "function", function: { name: "lookup", arguments: "{\"q\":\"b\"}" } }] },
            { role: "tool", tool_call_id: "call_2", content: "plain text result" }
          ],
          tools: [lookupTool],
          tool_choice: { type: "function", function: { name: "lookup" } }
        })
      )
      expect(fake.lastRequest()!.body).toMatchObject({
        contents: [
          { role: "user", parts: [{ text: "Define" }] },
          { role: "model", parts: [{ functionCall: { name: "lookup", args: { q: "a" } } }] },
          { role: "user", parts: [{ functionResponse: { name: "lookup", response: { definition: "first letter" } } }] },
          { role: "model", parts: [{ functionCall: { name: "lookup", args: { q: "b" } } }] },
          { role: "user", parts: [{ functionResponse: { name: "lookup", response: { content: "plain text result" } } }] }
        ],
        tools: [{ functionDeclarations: [{ name: "lookup", description: "Look a word up", parametersJsonSchema: lookupTool.function.parameters }] }],
        toolConfig: { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["lookup"] } }
      })
    }))

  it.effect("a tool message answering an unknown call is refused before any upstream call", () =>
    Effect.gen(function*() {
      const error = yield* failure(
        complete(targetFor(fake), chat({ messages: [{ role: "user", content: "x" }, { role: "tool", tool_call_id: "nope", content: "r" }] }))
      )
      expect(error).toMatchObject({ kind: "request", status: 400, retryable: false })
      expect(fake.requestCount).toBe(0)
    }))

  it.effect("an answer maps text, functionCall parts (with fresh ids), tool_calls finish and usage", () =>
    Effect.gen(function*() {
      fake.enqueue({
        text: "Sure.",
        toolCalls: [{ name: "lookup", arguments: { q: "z" } }],
        usage: { promptTokens: 40, completionTokens: 6, cachedTokens: 32 },
        model: "gemini-2.0-flash-001"
      })
      const result = yield* complete(targetFor(fake), chat({ tools: [lookupTool] }))
      expect(result).toEqual({
        id: expect.stringMatching(/^resp_/),
        model: "gemini-2.0-flash-001",
        content: "Sure.",
        toolCalls: [{ id: expect.stringMatching(/^call_/), name: "lookup", arguments: "{\"q\":\"z\"}" }],
        finishReason: "tool_calls",
        usage: { promptTokens: 40, completionTokens: 6, cachedTokens: 32 }
      })
    }))

  it.effect("MAX_TOKENS and SAFETY finish reasons map to length and content_filter", () =>
    Effect.gen(function*() {
      fake.enqueue({ text: "cut", finishReason: "length" }, { text: "", finishReason: "content_filter" })
      expect((yield* complete(targetFor(fake), chat())).finishReason).toBe("length")
      const blocked = yield* complete(targetFor(fake), chat())
      expect(blocked).toMatchObject({ finishReason: "content_filter", content: null })
    }))

  it.effect("streaming uses :streamGenerateContent?alt=sse and yields text, finish, then usage", () =>
    Effect.gen(function*() {
      fake.enqueue({ text: ["Hola", " mundo"], usage: { promptTokens: 7, completionTokens: 2 } })
      const deltas = yield* streamAll(targetFor(fake), chat())
      expect(fake.lastRequest()!.path).toBe("/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse")
      expect(deltas).toEqual([
        { type: "text", text: "Hola" },
        { type: "text", text: " mundo" },
        { type: "finish", reason: "stop" },
        { type: "usage", promptTokens: 7, completionTokens: 2, cachedTokens: 0 }
      ])
    }))

  it.effect("streamed function calls arrive whole, one index each", () =>
    Effect.gen(function*() {
      fake.enqueue({ toolCalls: [{ id: "fc_1", name: "lookup", arguments: { q: "1" } }, { name: "lookup", arguments: { q: "2" } }] })
      const deltas = yield* streamAll(targetFor(fake), chat({ tools: [lookupTool] }))
      const joined = assemble(deltas)
      expect(joined.calls).toEqual([
        { id: "fc_1", name: "lookup", arguments: "{\"q\":\"1\"}" },
        { id: expect.stringMatching(/^call_/), name: "lookup", arguments: "{\"q\":\"2\"}" }
      ])
      expect(joined.finish).toBe("tool_calls")
    }))

  it.effect("a 429 RESOURCE_EXHAUSTED carries its RetryInfo delay", () =>
    Effect.gen(function*() {
      fake.enqueue({ status: 429, retryAfter: 2.5 })
      const error = yield* failure(streamAll(targetFor(fake), chat()))
      expect(error).toMatchObject({ kind: "http", status: 429, code: "RESOURCE_EXHAUSTED", retryable: true, retryAfterMs: 2500 })
    }))

  it.effect("the fake lists models at GET /v1beta/models", () =>
    Effect.gen(function*() {
      const res = yield* Effect.promise(() => fetch(`${fake.baseUrl}/models`).then((r) => r.json()))
      expect(res).toMatchObject({ models: expect.arrayContaining([expect.objectContaining({ name: "models/gemini-2.0-flash" })]) })
    }))
})
