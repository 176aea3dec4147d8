/**
 * Server-Sent Events both ways: a decoder for upstream streams (bytes → messages, any line ending, events split
 * across network chunks) and an encoder for our own outgoing streams.
 */
import { createParser, type EventSourceMessage } from "eventsource-parser"
import { Chunk, Stream } from "effect"

export interface SseMessage {
  /** The `event:` field; undefined when the server sent none. */
  readonly event: string | undefined
  readonly id: string | undefined
  /** The `data:` lines joined with `\n`. */
  readonly data: string
}

/** A stateful decoder: feed it bytes as they arrive, get back the messages completed so far. */
export interface SseDecoder {
  readonly feed: (bytes: Uint8Array) => ReadonlyArray<SseMessage>
}

export const makeSseDecoder = (): SseDecoder => {
  const text = new TextDecoder()
  let pending: Array<SseMessage> = []
  const parser = createParser({
    onEvent: (message: EventSourceMessage) => {
      pending.push({ event: message.event, id: message.id, data: message.data })
    }
  })
  return {
    feed: (bytes) => {
      parser.feed(text.decode(bytes, { stream: true }))
      if (pending.length === 0) return pending
      const out = pending
      pending = []
      return out
    }
  }
}

/** Bytes of an SSE body → its messages. */
export const decodeSse = <E, R>(bytes: Stream.Stream<Uint8Array, E, R>): Stream.Stream<SseMessage, E, R> =>
  Stream.suspend(() => {
    const decoder = makeSseDecoder()
    return Stream.mapChunks(bytes, (chunk) => Chunk.flatMap(chunk, (b) => Chunk.unsafeFromArray(decoder.feed(b))))
  })

export interface SseEventInput {
  readonly event?: string | undefined
  readonly id?: string | undefined
  /** Text to send; a multi-line value becomes several `data:` lines (CR, LF and CRLF all split). */
  readonly data: string
}

/** One SSE event, terminated by the blank line: `event: x\nid: y\ndata: …\n\n`. */
export const sseEvent = ({ data, event, id }: SseEventInput): string => {
  let out = ""
  // A field value cannot hold a line break; dropping them keeps one event from forging another.
  if (event !== undefined) out += `event: ${event.replace(/[\r\n]/g, "")}\n`
  if (id !== undefined) out += `id: ${id.replace(/[\r\n\0]/g, "")}\n`
  for (const line of data.split(/\r\n|\r|\n/)) out += `data: ${line}\n`
  return out + "\n"
}

/** A comment line, ignored by clients: useful as a keep-alive ping. */
export const sseComment = (text = ""): string => `: ${text.replace(/[\r\n]/g, " ")}\n\n`
