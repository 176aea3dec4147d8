/**
 * The test connection of §4.5: one chat completion with a fixed short prompt and `max_tokens` 5, under a time
 * limit, answered in exactly one of three shapes (success, provider error, timeout).
 */
import { HttpBody, HttpClient, HttpClientRequest } from "@effect/platform"
import { Duration, Effect, Option, Redacted } from "effect"

export const TEST_PROMPT = "Reply with the single word: ok"

export type ProbeResult =
  | {
    readonly success: true
    readonly message: string
    readonly latency_ms: number
    readonly response: {
      readonly model: string
      readonly content: string
      readonly usage: { readonly prompt_tokens: number; readonly completion_tokens: number; readonly total_tokens: number }
    }
  }
  | { readonly success: false; readonly error: string; readonly latency_ms: number }
  | { readonly success: false; readonly error: string }

export interface ProbeTarget {
  readonly baseUrl: string
  readonly apiFormat: "openai" | "anthropic"
  readonly apiKey: Option.Option<Redacted.Redacted>
  readonly model: string
}

const record = (value: unknown): Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? Object.fromEntries(Object.entries(value)) : {}

const count = (value: unknown) => typeof value === "number" && Number.isFinite(value) ? value : 0

/** Reads the reply of either wire format; None when the body is not a chat completion. */
const parseReply = (format: "openai" | "anthropic", body: unknown, requested: string) => {
  const root = record(body)
  const model = typeof root.model === "string" ? root.model : requested
  if (format === "openai") {
    if (!Array.isArray(root.choices)) return Option.none()
    const message = record(record(root.choices[0]).message)
    const content = typeof message.content === "string" ? message.content : ""
    const usage = record(root.usage)
    const prompt = count(usage.prompt_tokens)
    const completion = count(usage.completion_tokens)
    return Option.some({
      model,
      content,
      usage: {
        prompt_tokens: prompt,
        completion_tokens: completion,
        total_tokens: usage.total_tokens === undefined ? prompt + completion : count(usage.total_tokens)
      }
    })
  }
  if (!Array.isArray(root.content)) return Option.none()
  const content = root.content.map(record).filter((b) => b.type === "text" && typeof b.text === "string")
    .map((b) => String(b.text)).join("")
  const usage = record(root.usage)
  const prompt = count(usage.input_tokens)
  const completion = count(usage.output_tokens)
  return Option.some({ model, content, usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion } })
}

/** Keeps a provider's error body short and free of the key it was sent. */
const describeBody = (text: string, apiKey: Option.Option<Redacted.Redacted>) => {
  const key = Option.map(apiKey, Redacted.value).pipe(Option.filter((k) => k.length >= 4))
  const clean = Option.match(key, { onNone: () => text, onSome: (k) => text.split(k).join("[redacted]") })
  return clean.length > 2000 ? `${clean.slice(0, 2000)}…` : clean
}

export const probeChat = (target: ProbeTarget, timeout: Duration.Duration) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const request = target.apiFormat === "openai"
      ? HttpClientRequest.post(`${target.baseUrl}/chat/completions`).pipe(
        HttpClientRequest.setHeaders(
          Option.match(target.apiKey, {
            onNone: () => ({}),
            onSome: (key) => ({ authorization: `Bearer ${Redacted.value(key)}` })
          })
        ),
        HttpClientRequest.setBody(HttpBody.unsafeJson({
          model: target.model,
          messages: [{ role: "user", content: TEST_PROMPT }],
          max_tokens: 5
        }))
      )
      : HttpClientRequest.post(`${target.baseUrl}/messages`).pipe(
        HttpClientRequest.setHeaders({
          "anthropic-version": "2023-06-01",
          ...Option.match(target.apiKey, {
            onNone: () => ({}),
            onSome: (key) => ({ "x-api-key": Redacted.value(key) })
          })
        }),
        HttpClientRequest.setBody(HttpBody.unsafeJson({
          model: target.model,
          max_tokens: 5,
          messages: [{ role: "user", content: TEST_PROMPT }]
        }))
      )
    const started = performance.now()
    const latency = () => Math.round(performance.now() - started)
    const exchange = client.execute(request).pipe(
      Effect.flatMap((response) => Effect.map(response.text, (text) => ({ status: response.status, text }))),
      Effect.scoped,
      Effect.either,
      Effect.timeoutOption(timeout)
    )
    const outcome = yield* exchange
    if (Option.isNone(outcome)) {
      const seconds = Duration.toSeconds(timeout)
      return { success: false, error: `Request timed out after ${Number(seconds.toFixed(3))} seconds` } satisfies ProbeResult
    }
    const latency_ms = latency()
    if (outcome.value._tag === "Left") {
      return {
        success: false,
        error: `Could not reach the provider: ${outcome.value.left.message}`,
        latency_ms
      } satisfies ProbeResult
    }
    const { status, text } = outcome.value.right
    if (status < 200 || status >= 300) {
      return {
        success: false,
        error: `Provider returned ${status}: ${describeBody(text, target.apiKey)}`,
        latency_ms
      } satisfies ProbeResult
    }
    const parsed = Option.flatMap(
      Option.liftThrowable((body: string): unknown => JSON.parse(body))(text),
      (body) => parseReply(target.apiFormat, body, target.model)
    )
    if (Option.isNone(parsed)) {
      return {
        success: false,
        error: `Provider returned ${status} with a body that is not a ${target.apiFormat} chat completion: ${describeBody(text, target.apiKey).slice(0, 200)}`,
        latency_ms
      } satisfies ProbeResult
    }
    return { success: true, message: "Connection successful", latency_ms, response: parsed.value } satisfies ProbeResult
  })
