/** SQL for webhook endpoints, deliveries and attempts. Times come from the app's `Clock`, never from `now()`. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export interface EndpointRow {
  readonly id: string
  readonly project_id: string
  readonly url: string
  readonly events: ReadonlyArray<string>
  readonly description: string | null
  readonly enabled: boolean
  readonly secret_ciphertext: string
  readonly failure_reason: string | null
  readonly failed_at: Date | null
  readonly last_error: string | null
  readonly created_at: Date
  readonly updated_at: Date
}

export type DeliveryStatus = "pending" | "succeeded" | "failed"

export interface DeliveryRow {
  readonly id: string
  readonly project_id: string
  readonly endpoint_id: string
  readonly event_id: string
  readonly event_type: string
  /** The event's `data` (with `event_id`) as the JSON text that goes into every body. */
  readonly event_data: string
  readonly occurred_at: Date
  readonly status: DeliveryStatus
  readonly attempt_count: number
  readonly next_attempt_at: Date | null
  readonly deadline_at: Date
  readonly replay_of: string | null
  readonly last_error: string | null
  readonly created_at: Date
  readonly completed_at: Date | null
}

export interface AttemptRow {
  readonly delivery_id: string
  readonly attempt: number
  readonly attempted_at: Date
  readonly status_code: number | null
  readonly latency_ms: number | null
  readonly error: string | null
  readonly response_snippet: string | null
}

/** A delivery with what sending it needs from its endpoint. */
export interface SendableRow extends DeliveryRow {
  readonly url: string
  readonly enabled: boolean
  readonly secret_ciphertext: string
}

/** Position after which a newest-first page continues. */
export interface PageAfter {
  readonly createdAt: Date
  readonly id: string
}

export interface DeliveryFilters {
  readonly endpointId?: string | undefined
  readonly status?: DeliveryStatus | undefined
  readonly eventType?: string | undefined
}

/** What an attempt means for its delivery. */
export type AttemptOutcome =
  | { readonly _tag: "Succeeded"; readonly now: Date }
  | {
    readonly _tag: "Failed"
    readonly error: string
    readonly now: Date
    /** Set when the retry budget is spent: the reason the endpoint is marked failing. */
    readonly markEndpointFailing?: string
  }
  | { readonly _tag: "Retry"; readonly error: string; readonly at: Date }

export type EndpointChanges = Partial<
  Pick<EndpointRow, "url" | "events" | "description" | "enabled" | "secret_ciphertext" | "updated_at">
>

export const makeWebhooksRepo = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const first = <A>(rows: ReadonlyArray<A>) => rows[0]
  const after = (page: PageAfter | undefined) =>
    page ? sql`(created_at, id) < (${page.createdAt}, ${page.id})` : sql`true`

  return {
    withTransaction: sql.withTransaction,

    insertEndpoint: (row: Omit<EndpointRow, "failure_reason" | "failed_at" | "last_error">) =>
      sql<EndpointRow>`INSERT INTO webhook_endpoints ${sql.insert({ ...row, events: [...row.events] })} RETURNING *`.pipe(
        Effect.map((rows) => rows[0]!)
      ),

    findEndpoint: (projectId: string, id: string) =>
      sql<EndpointRow>`SELECT * FROM webhook_endpoints WHERE project_id = ${projectId} AND id = ${id}`.pipe(
        Effect.map(first)
      ),

    listEndpoints: (projectId: string, limit: number, page: PageAfter | undefined) =>
      sql<EndpointRow>`
        SELECT * FROM webhook_endpoints WHERE project_id = ${projectId} AND ${after(page)}
        ORDER BY created_at DESC, id DESC LIMIT ${limit}`,

    updateEndpoint: (projectId: string, id: string, changes: EndpointChanges) =>
      sql<EndpointRow>`
        UPDATE webhook_endpoints SET ${
        sql.update(changes.events ? { ...changes, events: [...changes.events] } : { ...changes })
      }
        WHERE project_id = ${projectId} AND id = ${id} RETURNING *`.pipe(Effect.map(first)),

    deleteEndpoint: (projectId: string, id: string) =>
      sql<{ readonly id: string }>`
        DELETE FROM webhook_endpoints WHERE project_id = ${projectId} AND id = ${id} RETURNING id`.pipe(
        Effect.map((rows) => rows.length > 0)
      ),

    /** Enabled endpoints of the project whose filters contain any of `keys`. */
    matchingEndpoints: (projectId: string, keys: ReadonlyArray<string>) =>
      sql<{ readonly id: string }>`
        SELECT id FROM webhook_endpoints
        WHERE project_id = ${projectId} AND enabled AND events && ${[...keys]}::text[]`.pipe(
        Effect.map((rows) => rows.map((row) => row.id))
      ),

    insertDeliveries: (rows: ReadonlyArray<Omit<DeliveryRow, "attempt_count" | "last_error" | "completed_at">>) =>
      rows.length === 0
        ? Effect.succeed([] as ReadonlyArray<DeliveryRow>)
        : sql<DeliveryRow>`INSERT INTO webhook_deliveries ${sql.insert(rows.map((row) => ({ ...row })))} RETURNING *`,

    findDelivery: (projectId: string, id: string) =>
      sql<DeliveryRow>`SELECT * FROM webhook_deliveries WHERE project_id = ${projectId} AND id = ${id}`.pipe(
        Effect.map(first)
      ),

    listDeliveries: (projectId: string, filters: DeliveryFilters, limit: number, page: PageAfter | undefined) =>
      sql<DeliveryRow>`
        SELECT * FROM webhook_deliveries
        WHERE project_id = ${projectId}
          AND ${filters.endpointId === undefined ? sql`true` : sql`endpoint_id = ${filters.endpointId}`}
          AND ${filters.status === undefined ? sql`true` : sql`status = ${filters.status}`}
          AND ${filters.eventType === undefined ? sql`true` : sql`event_type = ${filters.eventType}`}
          AND ${after(page)}
        ORDER BY created_at DESC, id DESC LIMIT ${limit}`,

    attemptsOf: (deliveryIds: ReadonlyArray<string>) =>
      deliveryIds.length === 0
        ? Effect.succeed([] as ReadonlyArray<AttemptRow>)
        : sql<AttemptRow>`
            SELECT * FROM webhook_delivery_attempts WHERE delivery_id IN ${sql.in(deliveryIds)}
            ORDER BY delivery_id, attempt`,

    loadForSend: (deliveryId: string) =>
      sql<SendableRow>`
        SELECT d.*, e.url, e.enabled, e.secret_ciphertext
        FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
        WHERE d.id = ${deliveryId}`.pipe(Effect.map(first)),

    /**
     * Records one attempt and its consequence in a single statement (atomic without a transaction): the attempt
     * row, the delivery's new state if it is still pending, and the endpoint's failure mark.
     */
    recordAttempt: (attempt: AttemptRow, outcome: AttemptOutcome) => {
      const delivery = (() => {
        switch (outcome._tag) {
          case "Succeeded":
            return sql`status = 'succeeded', last_error = NULL, next_attempt_at = NULL, completed_at = ${outcome.now}`
          case "Failed":
            return sql`status = 'failed', last_error = ${outcome.error}, next_attempt_at = NULL, completed_at = ${outcome.now}`
          case "Retry":
            return sql`last_error = ${outcome.error}, next_attempt_at = ${outcome.at}`
        }
      })()
      const endpoint = outcome._tag === "Succeeded"
        // Only an endpoint marked failing is written: successes do not contend for the endpoint row.
        ? sql`UPDATE webhook_endpoints SET failure_reason = NULL, failed_at = NULL, last_error = NULL
              WHERE id IN (SELECT endpoint_id FROM delivery) AND failure_reason IS NOT NULL`
        : outcome._tag === "Failed" && outcome.markEndpointFailing !== undefined
        ? sql`UPDATE webhook_endpoints SET failure_reason = ${outcome.markEndpointFailing},
                failed_at = COALESCE(failed_at, ${outcome.now}), last_error = ${outcome.error}
              WHERE id IN (SELECT endpoint_id FROM delivery)`
        : sql`SELECT endpoint_id FROM delivery`
      return sql`
        WITH attempt AS (
          INSERT INTO webhook_delivery_attempts ${sql.insert({ ...attempt })} ON CONFLICT DO NOTHING
        ), delivery AS (
          UPDATE webhook_deliveries SET attempt_count = ${attempt.attempt}, ${delivery}
          WHERE id = ${attempt.delivery_id} AND status = 'pending'
          RETURNING endpoint_id
        )
        ${endpoint}`.pipe(Effect.asVoid)
    },

    /** Ends a pending delivery without an attempt (endpoint disabled, secret unreadable). */
    abandon: (id: string, error: string, now: Date) =>
      sql`
        UPDATE webhook_deliveries SET status = 'failed', last_error = ${error}, next_attempt_at = NULL,
          completed_at = ${now}
        WHERE id = ${id} AND status = 'pending'`.pipe(Effect.asVoid)
  }
})
