/**
 * The upstream model-listing call used to validate a connection and to sync its models:
 * OpenAI format `GET {base}/models` with a bearer key; Anthropic format `GET {base}/models` with `x-api-key`
 * and `anthropic-version`, following `has_more`/`last_id` pages.
 */
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { Data, Duration, Effect, Option, Redacted } from "effect"

export interface ListedModel {
  readonly id: string
  readonly name: string
  readonly owned_by: string | null
  /** Unix seconds; 0 when unknown. */
  readonly created: number
}

export class UpstreamListError extends Data.TaggedError("UpstreamListError")<{
  readonly kind: "auth" | "status" | "timeout" | "network" | "format"
  readonly status: number | null
  readonly message: string
}> {}

export const LISTING_FORMATS = ["openai", "anthropic"] as const
export type ListingFormat = (typeof LISTING_FORMATS)[number]

export const supportsListing = (format: string): format is ListingFormat =>
  LISTING_FORMATS.some((f) => f === format)

const record = (value: unknown): Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? Object.fromEntries(Object.entries(value)) : {}

const ANTHROPIC_MAX_PAGES = 20

const parseModels = (format: ListingFormat, body: unknown): Option.Option<{
  readonly models: ReadonlyArray<ListedModel>
  readonly next: string | null
}> => {
  const root = record(body)
  if (!Array.isArray(root.data)) return Option.none()
  const models: Array<ListedModel> = []
  for (const item of root.data.map(record)) {
    if (typeof item.id !== "string" || item.id.length === 0) continue
    if (format === "openai") {
      models.push({
        id: item.id,
        name: item.id,
        owned_by: typeof item.owned_by === "string" ? item.owned_by : null,
        created: typeof item.created === "number" ? Math.trunc(item.created) : 0
      })
    } else {
      const created = typeof item.created_at === "string" ? Date.parse(item.created_at) : Number.NaN
      models.push({
        id: item.id,
        name: typeof item.display_name === "string" ? item.display_name : item.id,
        owned_by: "anthropic",
        created: Number.isFinite(created) ? Math.trunc(created / 1000) : 0
      })
    }
  }
  const next = format === "anthropic" && root.has_more === true && typeof root.last_id === "string" ? root.last_id : null
  return Option.some({ models, next })
}

/** Lists the models a key can use; fails with a classified `UpstreamListError` (never with the key in it). */
export const listUpstreamModels = (
  target: { readonly format: ListingFormat; readonly baseUrl: string; readonly apiKey: Redacted.Redacted },
  timeout: Duration.Duration
) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const page = (after: string | null) => {
      const url = target.format === "anthropic"
        ? `${target.baseUrl}/models?limit=1000${after === null ? "" : `&after_id=${encodeURIComponent(after)}`}`
        : `${target.baseUrl}/models`
      const request = HttpClientRequest.get(url).pipe(
        HttpClientRequest.setHeaders(
          target.format === "anthropic"
            ? { "x-api-key": Redacted.value(target.apiKey), "anthropic-version": "2023-06-01" }
            : { authorization: `Bearer ${Redacted.value(target.apiKey)}` }
        )
      )
      return client.execute(request).pipe(
        Effect.flatMap((response) => Effect.map(response.text, (text) => ({ status: response.status, text }))),
        Effect.scoped,
        Effect.mapError((error) =>
          new UpstreamListError({ kind: "network", status: null, message: `could not reach the provider: ${error.reason}` })
        ),
        Effect.flatMap(({ status, text }) => {
          if (status === 401 || status === 403) {
            return Effect.fail(new UpstreamListError({ kind: "auth", status, message: `the provider rejected the key (${status})` }))
          }
          if (status < 200 || status >= 300) {
            return Effect.fail(new UpstreamListError({ kind: "status", status, message: `the provider answered ${status}` }))
          }
          const parsed = Option.flatMap(
            Option.liftThrowable((body: string): unknown => JSON.parse(body))(text),
            (body) => parseModels(target.format, body)
          )
          return Option.match(parsed, {
            onNone: () =>
              Effect.fail(new UpstreamListError({ kind: "format", status, message: "the provider's model list could not be read" })),
            onSome: Effect.succeed
          })
        })
      )
    }
    const all: Array<ListedModel> = []
    let after: string | null = null
    for (let i = 0; i < ANTHROPIC_MAX_PAGES; i++) {
      const result: { readonly models: ReadonlyArray<ListedModel>; readonly next: string | null } = yield* page(after)
      all.push(...result.models)
      if (result.next === null || result.next === after) break
      after = result.next
    }
    const unique = new Map(all.map((m) => [m.id, m]))
    return [...unique.values()]
  }).pipe(
    Effect.timeoutFail({
      duration: timeout,
      onTimeout: () =>
        new UpstreamListError({
          kind: "timeout",
          status: null,
          message: `the provider did not answer within ${Duration.toSeconds(timeout)} seconds`
        })
    })
  )
