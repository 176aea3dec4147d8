/**
 * Structured JSON logs, one object per line. Every line passes through `scrub`, which masks anything shaped like
 * one of our credentials or a bearer token, so a secret that slips into a message never reaches the output.
 */
import { Cause, HashMap, Layer, List, Logger, LogLevel } from "effect"

const SECRET_SHAPES = /\b(csk|sak|ect|ds|whsec)_[A-Za-z0-9_-]{8,}/g
const BEARER = /\b(Bearer|Token)\s+[A-Za-z0-9._~+/=-]{8,}/gi

export const scrub = (text: string): string =>
  text.replace(SECRET_SHAPES, (_match, prefix: string) => `${prefix}_[redacted]`).replace(BEARER, "$1 [redacted]")

const render = (value: unknown): unknown => {
  if (typeof value === "string") return value
  if (value instanceof Error) return value.message
  return value
}

export const formatLogLine = (options: Logger.Logger.Options<unknown>): string => {
  const annotations: Record<string, unknown> = {}
  for (const [key, value] of HashMap.toEntries(options.annotations)) annotations[key] = value
  const messages = Array.isArray(options.message) ? options.message : [options.message]
  const line: Record<string, unknown> = {
    time: options.date.toISOString(),
    level: options.logLevel.label.toLowerCase(),
    message: messages.map(render).map((m) => typeof m === "string" ? m : JSON.stringify(m)).join(" "),
    ...annotations
  }
  if (!Cause.isEmpty(options.cause)) line.cause = Cause.pretty(options.cause)
  const spans = List.toArray(options.spans)
  if (spans.length > 0) line.spans = spans.map((span) => span.label)
  return scrub(JSON.stringify(line))
}

/** A JSON logger writing to `write` (stdout by default). */
export const jsonLogger = (write: (line: string) => void = (line) => process.stdout.write(line + "\n")) =>
  Logger.make<unknown, void>((options) => write(formatLogLine(options)))

export const LoggingLive = (level: LogLevel.LogLevel, write?: (line: string) => void) =>
  Layer.merge(Logger.replace(Logger.defaultLogger, jsonLogger(write)), Logger.minimumLogLevel(level))
