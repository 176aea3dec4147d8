/** Runs the gateway (or the CLI) as a child process, the way a user would, and watches its output. */
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"

const root = Path.resolve(import.meta.dirname, "..")
export const bin = (name: string) => Path.join(root, "node_modules", ".bin", name)

export interface Running {
  readonly child: ChildProcess
  readonly output: () => string
  readonly waitFor: (pattern: RegExp, timeoutMs?: number) => Promise<RegExpMatchArray>
  readonly exited: Promise<number | null>
  readonly stop: (signal?: NodeJS.Signals) => Promise<number | null>
}

export const start = (command: string, args: ReadonlyArray<string>, env: Record<string, string>): Running => {
  const child = spawn(command, args, {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  const listeners = new Set<() => void>()
  const onData = (chunk: Buffer) => {
    output += chunk.toString("utf8")
    for (const listener of listeners) listener()
  }
  child.stdout?.on("data", onData)
  child.stderr?.on("data", onData)
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  return {
    child,
    output: () => output,
    exited,
    waitFor: (pattern, timeoutMs = 60_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const match = output.match(pattern)
          if (match) {
            listeners.delete(check)
            clearTimeout(timer)
            resolve(match)
          }
        }
        const timer = setTimeout(() => {
          listeners.delete(check)
          reject(new Error(`timed out waiting for ${pattern}; output so far:\n${output}`))
        }, timeoutMs)
        listeners.add(check)
        void exited.then(() => setTimeout(check, 10))
        check()
      }),
    stop: async (signal = "SIGTERM") => {
      if (child.exitCode === null) child.kill(signal)
      return exited
    }
  }
}

/** `npm start` without npm: the same entry point, through tsx. */
export const startNode = (env: Record<string, string>) => start(bin("tsx"), ["layers/main/node.ts"], env)

/**
 * The Deno binary from npm's `deno` package. Its `.bin` wrapper is a Node script that does not forward signals,
 * so the platform package's executable is started directly.
 */
const denoBinary = () => {
  const scope = Path.join(root, "node_modules", "@deno")
  const arch = process.arch === "arm64" ? "arm64" : "x64"
  const name = Fs.readdirSync(scope).find((entry) => entry.startsWith(`${process.platform}-${arch}`))
  if (name === undefined) throw new Error(`no Deno binary for ${process.platform}-${arch} under ${scope}`)
  return Path.join(scope, name, process.platform === "win32" ? "deno.exe" : "deno")
}

export const startDeno = (env: Record<string, string>) =>
  start(denoBinary(), ["run", "-A", "--unstable-no-legacy-abort", "layers/main/deno.ts"], env)

export const runCli = async (args: ReadonlyArray<string>, env: Record<string, string>) => {
  const running = start(bin("tsx"), ["layers/main/cli.ts", ...args], env)
  const code = await running.exited
  return { code, output: running.output() }
}

export const listeningPort = async (running: Running) =>
  Number((await running.waitFor(/Listening on http:\/\/[^:]+:(\d+)/))[1])
