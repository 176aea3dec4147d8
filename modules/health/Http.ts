import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { DatabaseInfo } from "../../layers/database.ts"
import { GatewayApi } from "../../layers/http/api.ts"
import { ApiError } from "../../schemas/errors.ts"

export const HealthHttpLive = HttpApiBuilder.group(GatewayApi, "health", (handlers) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const info = yield* DatabaseInfo
    const unavailable = new ApiError({
      status: 503,
      type: "api_error",
      code: "database_unavailable",
      message: "The database is not reachable"
    })
    return handlers
      .handle("healthz", () => Effect.succeed({ status: "ok" as const }))
      .handle("readyz", () =>
        sql`SELECT 1`.pipe(
          Effect.timeoutFail({ duration: "2 seconds", onTimeout: () => unavailable }),
          Effect.mapError(() => unavailable),
          Effect.as({ status: "ok" as const, database: info.backend })
        ))
  }))
