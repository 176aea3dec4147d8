/**
 * Starts the real gateway (the same layers as `npm start`) on an ephemeral loopback port with a fresh database:
 * embedded PGlite in a temporary DATA_DIR, or, when `TEST_DATABASE_URL` is set, a freshly created PostgreSQL
 * database that is dropped afterwards. Logs are captured as JSON lines.
 */
import { HttpApiBuilder, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { type Clock, ConfigProvider, Context, Effect, Exit, Layer, LogLevel, Redacted, Scope } from "effect"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import { createServer } from "node:http"
import * as Os from "node:os"
import * as Path from "node:path"
import { AppConfig } from "../layers/config.ts"
import { LoggingLive } from "../layers/logging.ts"
import { AppLive, httpMiddleware } from "../layers/server.ts"
import { Projects, revealKeys } from "../modules/projects/Service.ts"
import { Credentials } from "../modules/auth/Service.ts"

export interface TestProject {
  readonly id: string
  readonly secretKey: string
  readonly apiKey: string
}

export interface Gateway {
  readonly baseUrl: string
  readonly port: number
  /** The project created for the test. */
  readonly project: TestProject
  /** Every log line the server wrote, as JSON text. */
  readonly logs: Array<string>
  readonly env: Readonly<Record<string, string>>
  /** Runs an effect against the server's own services and database. */
  readonly run: <A, E>(effect: Effect.Effect<A, E, AppServices>) => Promise<A>
  readonly createProject: (name?: string) => Promise<TestProject>
  readonly createUser: (projectId: string, email?: string, password?: string) => Promise<{ email: string; password: string }>
  readonly close: () => Promise<void>
}

export type AppServices = Layer.Layer.Success<typeof AppLive>

const randomName = () => Crypto.randomBytes(6).toString("hex")

/** A fresh PostgreSQL database on the server of `TEST_DATABASE_URL`, dropped on close. */
const freshPostgres = async (adminUrl: string) => {
  const name = `gw_test_${randomName()}`
  const admin = (statement: string) =>
    Effect.runPromise(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql.unsafe(statement)
      }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(adminUrl), maxConnections: 1 })), Effect.scoped)
    )
  await admin(`CREATE DATABASE ${name}`)
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined)
  }
}

/** A fresh PostgreSQL database (needs `TEST_DATABASE_URL`) that several gateways can share; drop it when done. */
export const sharedPostgres = (): Promise<{ url: string; drop: () => Promise<void> }> => {
  const adminUrl = process.env.TEST_DATABASE_URL
  if (!adminUrl) throw new Error("sharedPostgres needs TEST_DATABASE_URL")
  return freshPostgres(adminUrl)
}

export interface GatewayOptions {
  readonly env?: Record<string, string>
  /**
   * Join the database of a running gateway, as a second server process would (same PostgreSQL database, or the
   * same PGlite DATA_DIR through its socket), instead of a fresh one. Close the joining gateway first.
   */
  readonly sharedWith?: Gateway
  /** Services given to the server's layers from outside, e.g. an override of a `Context.Reference`. */
  readonly provide?: Layer.Layer<never>
  /** The server's `Clock` (and `run`'s): tests move time with it instead of sleeping. */
  readonly clock?: Clock.Clock
  /** Use this PostgreSQL database (e.g. from `sharedPostgres()`) instead of a fresh one; it is not dropped. */
  readonly databaseUrl?: string
}

export const startGateway = async (options: GatewayOptions = {}): Promise<Gateway> => {
  const logs: Array<string> = []
  const shared = options.sharedWith?.env
  const dataDir = shared?.DATA_DIR ?? Fs.mkdtempSync(Path.join(Os.tmpdir(), "gw-"))
  const adminUrl = process.env.TEST_DATABASE_URL
  const postgres = shared !== undefined
    ? undefined
    : options.databaseUrl !== undefined
    ? { url: options.databaseUrl, drop: () => Promise.resolve() }
    : adminUrl
    ? await freshPostgres(adminUrl)
    : undefined
  const databaseUrl = shared?.DATABASE_URL ?? postgres?.url
  const template = process.env.GW_PGLITE_TEMPLATE
  if (shared === undefined && !postgres && template) Fs.cpSync(template, Path.join(dataDir, "pgdata"), { recursive: true })
  const env: Record<string, string> = {
    HOST: "127.0.0.1",
    PORT: "0",
    DATA_DIR: dataDir,
    LOG_LEVEL: "info",
    BOOTSTRAP_DEFAULT_PROJECT: "false",
    MASTER_KEY: shared?.MASTER_KEY ?? Crypto.randomBytes(32).toString("base64"),
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    ...options.env
  }
  const configLayer = AppConfig.layer.pipe(
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))))
  )
  const full = HttpApiBuilder.serve(httpMiddleware).pipe(
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
    Layer.provideMerge(AppLive),
    Layer.provideMerge(configLayer),
    Layer.provide(LoggingLive(LogLevel.Info, (line) => logs.push(line))),
    Layer.provide(options.provide ?? Layer.empty),
    Layer.provide(options.clock ? Layer.setClock(options.clock) : Layer.empty)
  )
  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(Layer.buildWithScope(full, scope)).catch(async (error: unknown) => {
    await postgres?.drop()
    throw error
  })
  const address = Context.get(context, HttpServer.HttpServer).address
  if (address._tag !== "TcpAddress") throw new Error("expected a TCP address")
  const baseUrl = `http://127.0.0.1:${address.port}`
  const run = <A, E>(effect: Effect.Effect<A, E, AppServices>) =>
    Effect.runPromise(
      Effect.provide(options.clock ? Effect.withClock(effect, options.clock) : effect, context)
    )

  const createProject = (name = `test ${randomName()}`) =>
    run(Effect.gen(function*() {
      const created = yield* (yield* Projects).create(name)
      const keys = revealKeys(created)
      return { id: created.project.id, secretKey: keys.secret_key, apiKey: keys.api_key }
    }))

  const createUser = (projectId: string, email = `user-${randomName()}@example.com`, password = "correct horse battery") =>
    run(Effect.gen(function*() {
      yield* (yield* Credentials).createUser(email, password, projectId)
      return { email, password }
    }))

  return {
    baseUrl,
    port: address.port,
    project: await createProject(),
    logs,
    env,
    run,
    createProject,
    createUser,
    close: async () => {
      await Effect.runPromise(Scope.close(scope, Exit.void))
      await postgres?.drop()
      if (shared === undefined) Fs.rmSync(dataDir, { recursive: true, force: true })
    }
  }
}
