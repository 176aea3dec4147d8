/**
 * The operator CLI: `npm run cli -- <command>`. Same config and database as the server; with the embedded
 * database it joins a running server's socket, or opens the data directory itself when no server runs.
 *
 *   projects create --name N [--json]      projects list [--json]
 *   projects configure --project ID [--markup P] [--credit-gated true|false] [--credit-balance USD]
 *   keys create --project ID [--kind api|secret] [--name N] [--json]
 *   keys list --project ID [--json]        keys revoke --project ID --key KEY_ID
 *   users create --email E --password P --project ID
 */
import { Command, Options } from "@effect/cli"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer, LogLevel, Logger, Option, Redacted } from "effect"
import { Credentials } from "../../modules/auth/Service.ts"
import { Projects, revealKeys } from "../../modules/projects/Service.ts"
import { Billing } from "../../modules/usage/Service.ts"
import { AppConfig } from "../config.ts"
import { InfraLive, ServicesLive } from "../server.ts"

const json = Options.boolean("json").pipe(Options.withDescription("Print JSON"))
const projectId = Options.text("project").pipe(Options.withDescription("Project id"))

const print = (asJson: boolean, value: unknown, text: string) => Console.log(asJson ? JSON.stringify(value) : text)

const projectsCreate = Command.make(
  "create",
  { name: Options.text("name").pipe(Options.withDescription("Project name")), json },
  ({ json, name }) =>
    Effect.gen(function*() {
      const created = yield* (yield* Projects).create(name)
      const keys = revealKeys(created)
      yield* print(
        json,
        { project: { id: created.project.id, name: created.project.name }, ...keys },
        `project ${created.project.id} (${created.project.name})\nsecret key: ${keys.secret_key}\nAPI key:    ${keys.api_key}`
      )
    })
)

const projectsList = Command.make("list", { json }, ({ json }) =>
  Effect.gen(function*() {
    const projects = yield* (yield* Projects).list
    yield* print(json, { data: projects }, projects.map((p) => `${p.id}\t${p.name}`).join("\n"))
  }))

const projectsConfigure = Command.make(
  "configure",
  {
    project: projectId,
    markup: Options.float("markup").pipe(Options.optional, Options.withDescription("Markup percentage on managed keys")),
    creditGated: Options.boolean("credit-gated").pipe(Options.optional),
    creditBalance: Options.float("credit-balance").pipe(Options.optional, Options.withDescription("Balance in USD"))
  },
  ({ creditBalance, creditGated, markup, project }) =>
    Effect.gen(function*() {
      yield* (yield* Projects).get(project)
      const billing = yield* Billing
      yield* billing.configure(project, {
        ...Option.match(markup, { onNone: () => ({}), onSome: (markupPercentage) => ({ markupPercentage }) }),
        ...Option.match(creditGated, { onNone: () => ({}), onSome: (gated) => ({ creditGated: gated }) }),
        ...Option.match(creditBalance, { onNone: () => ({}), onSome: (creditBalanceUsd) => ({ creditBalanceUsd }) })
      })
      yield* Console.log(JSON.stringify(yield* billing.settings(project)))
    })
)

const keysCreate = Command.make(
  "create",
  {
    project: projectId,
    kind: Options.choice("kind", ["api", "secret"]).pipe(Options.withDefault("api" as const)),
    name: Options.text("name").pipe(Options.withDefault("CLI key")),
    json
  },
  ({ json, kind, name, project }) =>
    Effect.gen(function*() {
      yield* (yield* Projects).get(project)
      const created = yield* (yield* Credentials).createKey(project, kind, name)
      const key = Redacted.value(created.secret)
      yield* print(json, { ...created.key, key }, `${created.key.id}\t${key}`)
    })
)

const keysList = Command.make("list", { project: projectId, json }, ({ json, project }) =>
  Effect.gen(function*() {
    const keys = yield* (yield* Credentials).listKeys(project)
    yield* print(
      json,
      { data: keys },
      keys.map((k) => `${k.id}\t${k.kind}\t${k.key_prefix}…\t${k.name}${k.revoked_at ? "\trevoked" : ""}`).join("\n")
    )
  }))

const keysRevoke = Command.make(
  "revoke",
  { project: projectId, key: Options.text("key").pipe(Options.withDescription("Key id")) },
  ({ key, project }) =>
    Effect.gen(function*() {
      const revoked = yield* (yield* Credentials).revokeKey(project, key)
      yield* Console.log(`revoked ${revoked.id}`)
    })
)

const usersCreate = Command.make(
  "create",
  { email: Options.text("email"), password: Options.redacted("password"), project: projectId },
  ({ email, password, project }) =>
    Effect.gen(function*() {
      yield* (yield* Projects).get(project)
      const user = yield* (yield* Credentials).createUser(email, Redacted.value(password), project)
      yield* Console.log(`${user.created ? "created" : "added"} user ${user.id} (${user.email}) in project ${project}`)
    })
)

const cli = Command.make("gateway").pipe(
  Command.withSubcommands([
    Command.make("projects").pipe(Command.withSubcommands([projectsCreate, projectsList, projectsConfigure])),
    Command.make("keys").pipe(Command.withSubcommands([keysCreate, keysList, keysRevoke])),
    Command.make("users").pipe(Command.withSubcommands([usersCreate]))
  ])
)

const run = Command.run(cli, { name: "gateway", version: "0.1.0" })

const AppLayer = ServicesLive.pipe(
  Layer.provideMerge(InfraLive),
  Layer.provideMerge(AppConfig.layer),
  Layer.provideMerge(NodeContext.layer),
  Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
)

run(process.argv).pipe(
  Effect.catchTag("ApiError", (error) => Effect.flatMap(Console.error(`error: ${error.message}`), () => Effect.fail(error))),
  Effect.provide(AppLayer),
  NodeRuntime.runMain({ disablePrettyLogger: true })
)
