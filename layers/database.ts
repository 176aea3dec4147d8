/**
 * The database layer: one `SqlClient` (node-postgres through `@effect/sql-pg`) for both backends.
 *
 * - `DATABASE_URL` set: real PostgreSQL.
 * - unset: embedded PGlite (PostgreSQL in WASM) persisted under `DATA_DIR/pgdata`, served on a Unix socket
 *   inside `DATA_DIR` by `@electric-sql/pglite-socket`, so the same driver, SQL and migrations run on both. A
 *   second process (the CLI while the server runs) connects to that socket instead of opening the files twice.
 *
 * Migrations run at start with the `@effect/sql` Migrator.
 */
import { PgClient } from "@effect/sql-pg"
import { Migrator, SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Context, Data, Duration, Effect, Layer, Option, Redacted } from "effect"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Path from "node:path"
import { AppConfig } from "./config.ts"
import { migrations } from "./migrations/index.ts"

export class DatabaseError extends Data.TaggedError("DatabaseError")<{
  readonly message: string
  readonly cause?: unknown
}> {}

/** Which backend this process talks to; surfaced by `/readyz` and the logs. */
export class DatabaseInfo extends Context.Tag("DatabaseInfo")<DatabaseInfo, {
  readonly backend: "postgres" | "pglite"
  readonly embeddedOwner: boolean
}>() {}

const SOCKET_PORT = 5432
const socketFile = (dir: string) => Path.join(dir, `.s.PGSQL.${SOCKET_PORT}`)

const canConnect = (path: string) =>
  Effect.async<boolean>((resume) => {
    const socket = Net.connect({ path })
    const done = (ok: boolean) => {
      socket.removeAllListeners()
      socket.destroy()
      resume(Effect.succeed(ok))
    }
    socket.once("connect", () => done(true))
    socket.once("error", () => done(false))
    return Effect.sync(() => socket.destroy())
  })

/**
 * Opens (or joins) the embedded PGlite database under `dataDir` and yields the socket directory to connect to.
 * The PGlite instance and its socket live as long as the surrounding scope.
 */
export const embeddedPostgres = (dataDir: string) =>
  Effect.gen(function*() {
    const dir = Path.resolve(dataDir)
    yield* Effect.try({
      try: () => Fs.mkdirSync(dir, { recursive: true, mode: 0o700 }),
      catch: (cause) => new DatabaseError({ message: `cannot create DATA_DIR ${dir}`, cause })
    })
    const socket = socketFile(dir)
    if (socket.length > 100) {
      return yield* new DatabaseError({ message: `DATA_DIR path too long for a Unix socket: ${dir}` })
    }
    if (Fs.existsSync(socket)) {
      if (yield* canConnect(socket)) return { socketDir: dir, owner: false }
      Fs.rmSync(socket, { force: true })
    }
    const { PGlite } = yield* Effect.promise(() => import("@electric-sql/pglite"))
    const { PGLiteSocketServer } = yield* Effect.promise(() => import("@electric-sql/pglite-socket"))
    const db = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          const db = new PGlite(Path.join(dir, "pgdata"))
          await db.waitReady
          return db
        },
        catch: (cause) => new DatabaseError({ message: "cannot open the embedded database", cause })
      }),
      (db) => Effect.promise(() => db.close()).pipe(Effect.ignore)
    )
    const server = new PGLiteSocketServer({ db, path: socket, maxConnections: 64 })
    yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => server.start(),
        catch: (cause) => new DatabaseError({ message: "cannot start the embedded database socket", cause })
      }),
      () => Effect.promise(() => server.stop()).pipe(Effect.ignore)
    )
    return { socketDir: dir, owner: true }
  })

const runMigrations = Migrator.make({})({ loader: Migrator.fromRecord(migrations) }).pipe(
  Effect.mapError((cause) => new DatabaseError({ message: `migration failed: ${cause.message}`, cause }))
)

/** The PgClient for a database URL or an embedded socket directory. */
const clientLayer = (
  target: { readonly url: Redacted.Redacted } | { readonly socketDir: string },
  maxConnections: number
): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, SqlError> =>
  "url" in target
    ? PgClient.layer({ url: target.url, maxConnections, connectTimeout: Duration.seconds(10) })
    : PgClient.layer({
      host: target.socketDir,
      port: SOCKET_PORT,
      database: "postgres",
      username: "postgres",
      maxConnections,
      connectTimeout: Duration.seconds(10)
    })

/**
 * The application's database: picks the backend from config, connects, runs the migrations, and provides
 * `SqlClient`, `PgClient` and `DatabaseInfo`.
 */
export const DatabaseLive: Layer.Layer<
  SqlClient.SqlClient | PgClient.PgClient | DatabaseInfo,
  DatabaseError | SqlError,
  AppConfig
> = Layer.unwrapScoped(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const target = yield* Option.match(config.databaseUrl, {
      onSome: (url) => Effect.succeed({ url, owner: false, backend: "postgres" as const }),
      onNone: () =>
        embeddedPostgres(config.dataDir).pipe(
          Effect.map(({ owner, socketDir }) => ({ socketDir, owner, backend: "pglite" as const }))
        )
    })
    // PGlite is one backend behind pglite-socket, which interleaves the extended-protocol messages of concurrent
    // connections once transactions mix in ("portal does not exist", stalls): one connection serialises them.
    const client = clientLayer(target, target.backend === "postgres" ? 20 : 1)
    const migrated = Layer.effectDiscard(runMigrations).pipe(Layer.provideMerge(client))
    return Layer.merge(
      migrated,
      Layer.succeed(DatabaseInfo, { backend: target.backend, embeddedOwner: target.owner })
    )
  })
)
