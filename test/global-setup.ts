/**
 * Runs once before the suite: builds a migrated embedded database in a template directory, which every test
 * gateway copies instead of initialising PGlite from scratch (about 1 s instead of 7 s per gateway).
 */
import { ConfigProvider, Effect, Layer } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { AppConfig } from "../layers/config.ts"
import { DatabaseLive } from "../layers/database.ts"

export default async function setup() {
  if (process.env.TEST_DATABASE_URL) return
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "gw-template-"))
  const config = AppConfig.layer.pipe(
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["DATA_DIR", dir]]))))
  )
  await Effect.runPromise(Layer.build(DatabaseLive.pipe(Layer.provide(config))).pipe(Effect.scoped))
  process.env.GW_PGLITE_TEMPLATE = Path.join(dir, "pgdata")
  return () => Fs.rmSync(dir, { recursive: true, force: true })
}
