/** SSE both ways: the upstream decoder and our own event encoder. */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Stream } from "effect"
import { decodeSse, makeSseDecoder, sseComment, sseEvent } from "../../layers/providers/sse.ts"

const bytes = (text: string) => new TextEncoder().encode(text)

describe("SSE decoder", () => {
  it("joins an event split across network chunks, even inside a multi-byte character", () => {
    const decoder = makeSseDecoder()
    const all = bytes("data: {\"text\":\"héllo\"}\n\n")
    const cut = all.indexOf(0xc3) + 1 // between the two bytes of "é"
    expect(decoder.feed(all.slice(0, cut))).toEqual([])
    expect(decoder.feed(all.slice(cut))).toEqual([{ event: undefined, id: undefined, data: "{\"text\":\"héllo\"}" }])
  })

  it("reads event: and id: fields, CRLF line ends, multi-line data and skips comments", () => {
    const decoder = makeSseDecoder()
    const out = decoder.feed(bytes(": ping\r\n\r\nevent: message_start\r\nid: 7\r\ndata: one\r\ndata: two\r\n\r\ndata: [DONE]\n\n"))
    expect(out).toEqual([
      { event: "message_start", id: "7", data: "one\ntwo" },
      { event: undefined, id: undefined, data: "[DONE]" }
    ])
  })

  it.effect("decodeSse turns a byte stream into messages", () =>
    Effect.gen(function*() {
      const messages = yield* decodeSse(Stream.make(bytes("data: a\n"), bytes("\ndata: b\n\n"))).pipe(Stream.runCollect)
      expect(Chunk.toReadonlyArray(messages).map((m) => m.data)).toEqual(["a", "b"])
    }))
})

describe("SSE encoder", () => {
  it("writes event, id and data lines ended by a blank line", () => {
    expect(sseEvent({ event: "turn.completed", id: "42", data: "{\"ok\":true}" })).toBe(
      "event: turn.completed\nid: 42\ndata: {\"ok\":true}\n\n"
    )
    expect(sseEvent({ data: "[DONE]" })).toBe("data: [DONE]\n\n")
  })

  it("splits multi-line data into several data: lines", () => {
    expect(sseEvent({ data: "line 1\nline 2\r\nline 3\rline 4" })).toBe(
      "data: line 1\ndata: line 2\ndata: line 3\ndata: line 4\n\n"
    )
  })

  it("line breaks in event or id cannot start a forged field", () => {
    expect(sseEvent({ event: "a\ndata: forged", id: "1\r\n2", data: "x" })).toBe("event: adata: forged\nid: 12\ndata: x\n\n")
  })

  it("round-trips through the decoder", () => {
    const data = "first\nsecond\n\nfourth"
    const [message] = makeSseDecoder().feed(bytes(sseEvent({ event: "e", id: "i", data }) + sseComment("keep-alive")))
    expect(message).toEqual({ event: "e", id: "i", data })
  })
})
