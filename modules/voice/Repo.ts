/** SQL for voice: the per-project, per-minute request counter shared by every server process. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export const makeVoiceRepo = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return {
    /**
     * Counts one request in the project's current minute (the database clock, so every process agrees) and
     * returns the count so far and the seconds left in the window. The first request of a window also drops the
     * project's older windows.
     */
    countRequest: (projectId: string) =>
      Effect.gen(function*() {
        const rows = yield* sql<{ readonly requests: number; readonly seconds_left: string }>`
          INSERT INTO voice_rate_windows (project_id, window_start, requests)
          VALUES (${projectId}, date_trunc('minute', now()), 1)
          ON CONFLICT (project_id, window_start)
          DO UPDATE SET requests = voice_rate_windows.requests + 1
          RETURNING requests,
            EXTRACT(EPOCH FROM (window_start + interval '1 minute' - now()))::text AS seconds_left`
        const row = rows[0]
        const requests = row?.requests ?? 1
        if (requests === 1) {
          yield* sql`
            DELETE FROM voice_rate_windows
            WHERE project_id = ${projectId} AND window_start < date_trunc('minute', now())`
        }
        return { requests, secondsLeft: Math.max(1, Math.ceil(Number(row?.seconds_left ?? 60))) }
      })
  }
})
