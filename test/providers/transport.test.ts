/**
 * What every family shares: error statuses become UpstreamErrors (retryable or not, Retry-After, capped body),
 * timeouts, interruption aborting the upstream request, truncated streams, and kept-alive connections.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Fiber, Option, Stream, TestClock } from "effect"
import { afterAll, beforeAll, beforeEach } from "vitest"
import { ProviderAdapters, ProviderAdaptersLive } from "../../layers/providers/Service.ts"
import { MAX_ERROR_BODY } from "../../layers/providers/types.ts"
import { startAnthropicFake } from "../fakes/anthropic.ts"
import { startGoogleFake } from "../fakes/google.ts"
import { startOpenAIFake } from "../fakes/openai.ts"
import type { FakeOptions, FakeUpstream } from "../fakes/upstream.ts"
import { API_KEYS, assemble, chat, complete, failure, streamAll, targetFor, until } from "./helpers.ts"

const families = [
  ["openai", (o: FakeOptions) => startOpenAIFake(o)],
  ["anthropic", (o: FakeOptions) => startAnthropicFake(o)],
  ["google", (o: FakeOptions) => startGoogleFake(o)]
] as const

for (const [family, start] of families) {
  layer(ProviderAdaptersLive)(`${family} transport`, (it) => {
    let fake: FakeUpstream
    beforeAll(async () => {
      fake = await start({ apiKey: API_KEYS[family] })
    })
    afterAll(() => fake.close())
    beforeEach(() => fake.reset())

    it.effect("a 400 answer is a non-retryable http error with the status, provider code and message", () =>
      Effect.gen(function*() {
        fake.enqueue({ status: 400, error: { message: "messages: field required" } })
        const error = yield* failure(complete(targetFor(fake), chat()))
        expect(error).toMatchObject({ _tag: "UpstreamError", kind: "http", family, status: 400, retryable: false })
        expect(error.message).toContain("messages: field required")
        expect(error.code).toEqual(expect.any(String))
        expect(JSON.parse(error.body ?? "")).toBeTypeOf("object")
      }))

    it.effect("a 429 answer is retryable and carries the Retry-After delay in milliseconds", () =>
      Effect.gen(function*() {
        fake.enqueue({ status: 429, retryAfter: 3 })
        const error = yield* failure(complete(targetFor(fake), chat()))
        expect(error).toMatchObject({ kind: "http", status: 429, retryable: true, retryAfterMs: 3000 })
      }))

    it.effect("a 500 answer is retryable", () =>
      Effect.gen(function*() {
        fake.enqueue({ status: 500 })
        const error = yield* failure(complete(targetFor(fake), chat()))
        expect(error).toMatchObject({ kind: "http", status: 500, retryable: true })
        expect(error.retryAfterMs).toBeUndefined()
      }))

    it.effect("a streamed call answered with an error status fails before any delta", () =>
      Effect.gen(function*() {
        fake.enqueue({ status: 503 })
        const error = yield* failure(streamAll(targetFor(fake), chat()))
        expect(error).toMatchObject({ kind: "http", status: 503, retryable: true })
      }))

    it.effect("an error body is kept up to MAX_ERROR_BODY characters", () =>
      Effect.gen(function*() {
        fake.enqueue({ status: 400, error: { message: "x".repeat(MAX_ERROR_BODY * 2) } })
        const error = yield* failure(complete(targetFor(fake), chat()))
        expect(error.body?.length).toBe(MAX_ERROR_BODY)
        expect(error.message.length).toBeLessThan(MAX_ERROR_BODY * 3)
      }))

    it.effect("a wrong API key is the upstream's non-retryable auth error", () =>
      Effect.gen(function*() {
        const error = yield* failure(complete(targetFor(fake, { apiKey: Option.none() }), chat()))
        expect(error).toMatchObject({ kind: "http", retryable: false })
        expect([400, 401]).toContain(error.status)
      }))

    it.effect("a 200 body in the wrong shape is a non-retryable decode error", () =>
      Effect.gen(function*() {
        fake.enqueue({ rawBody: { unexpected: true, candidates: "no", choices: "no", content: "no" } })
        const error = yield* failure(complete(targetFor(fake), chat()))
        expect(error).toMatchObject({ kind: "decode", retryable: false })
      }))

    it.effect("a refused connection is a retryable network error", () =>
      Effect.gen(function*() {
        const error = yield* failure(complete(targetFor(fake, { baseUrl: "http://127.0.0.1:1/v1" }), chat()))
        expect(error).toMatchObject({ kind: "network", retryable: true })
      }))

    it.effect("a call unanswered within timeoutMs fails with timeout and aborts the upstream request", () =>
      Effect.gen(function*() {
        fake.enqueue({ hang: true })
        const fiber = yield* Effect.fork(complete(targetFor(fake, { timeoutMs: 30_000 }), chat()))
        yield* Effect.promise(() => fake.waitForRequests(1))
        yield* TestClock.adjust(30_000)
        const error = yield* failure(Fiber.join(fiber))
        expect(error).toMatchObject({ kind: "timeout", retryable: true })
        yield* Effect.promise(() => fake.waitForAbort())
      }))

    it.effect("a stream whose next event is later than timeoutMs fails with timeout after its first deltas", () =>
      Effect.gen(function*() {
        // The events before the first text differ per family (role chunk; message_start, block start, ping).
        fake.enqueue({ text: ["one", "two", "three"], stallAfterEvents: { openai: 2, anthropic: 4, google: 1 }[family] })
        const adapters = yield* ProviderAdapters
        const seen: Array<string> = []
        const fiber = yield* adapters.stream(targetFor(fake, { timeoutMs: 30_000 }), chat()).pipe(
          Stream.runForEach((delta) => Effect.sync(() => seen.push(delta.type))),
          Effect.either,
          Effect.fork
        )
        yield* Effect.promise(() => fake.waitForRequests(1))
        // Let the first events arrive on the real network before moving the test clock.
        yield* Effect.promise(() => until(() => seen.includes("text")))
        yield* TestClock.adjust(30_000)
        const result = yield* Fiber.join(fiber)
        expect(seen).toEqual(["text"])
        expect(result._tag).toBe("Left")
        if (result._tag === "Left") expect(result.left).toMatchObject({ kind: "timeout", retryable: true })
        yield* Effect.promise(() => fake.waitForAbort())
      }))

    it.effect("interrupting a call aborts the upstream request", () =>
      Effect.gen(function*() {
        fake.enqueue({ hang: true })
        const fiber = yield* Effect.fork(complete(targetFor(fake), chat()))
        yield* Effect.promise(() => fake.waitForRequests(1))
        yield* Fiber.interrupt(fiber)
        const aborted = yield* Effect.promise(() => fake.waitForAbort())
        expect(aborted.aborted).toBe(true)
      }))

    it.effect("a consumer that stops reading a stream aborts the upstream request", () =>
      Effect.gen(function*() {
        fake.enqueue({ text: Array.from({ length: 50 }, (_, i) => `chunk${i} `), chunkDelayMs: 20 })
        const adapters = yield* ProviderAdapters
        const first = yield* adapters.stream(targetFor(fake), chat()).pipe(
          Stream.filter((delta) => delta.type === "text"),
          Stream.take(2),
          Stream.runCollect
        )
        expect(first.length).toBe(2)
        yield* Effect.promise(() => fake.waitForAbort())
        expect(fake.abortCount).toBe(1)
      }))

    it.effect("a stream cut before its end marker fails as a retryable network error", () =>
      Effect.gen(function*() {
        fake.enqueue({ text: ["a", "b", "c"], cutAfterEvents: 2 })
        const error = yield* failure(streamAll(targetFor(fake), chat()))
        expect(error).toMatchObject({ kind: "network", retryable: true })
      }))

    it.effect("an error event inside a stream fails the stream after the text already sent", () =>
      Effect.gen(function*() {
        fake.enqueue({ text: ["partial ", "answer"], streamError: { message: "Overloaded now" } })
        const adapters = yield* ProviderAdapters
        const seen: Array<string> = []
        const error = yield* failure(
          adapters.stream(targetFor(fake), chat()).pipe(
            Stream.runForEach((delta) => Effect.sync(() => delta.type === "text" && seen.push(delta.text)))
          )
        )
        expect(seen.join("")).toBe("partial answer")
        expect(error.kind).toBe("http")
        expect(error.message).toContain("Overloaded now")
      }))

    it.effect("sequential calls reuse one kept-alive connection", () =>
      Effect.gen(function*() {
        const target = targetFor(fake)
        // Warm the pool (earlier tests may have left sockets that the server closed).
        yield* complete(target, chat())
        const before = fake.connectionCount
        yield* complete(target, chat())
        yield* streamAll(target, chat())
        const streamed = assemble(yield* streamAll(target, chat()))
        expect(streamed.text).toBe("echo: Hello")
        expect(fake.connectionCount).toBe(before)
      }))
  })
}
