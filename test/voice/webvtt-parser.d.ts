/** Types for `webvtt-parser` (a strict WebVTT parser, used to check the gateway's VTT output). */
declare module "webvtt-parser" {
  interface CueNode {
    readonly type: string
    readonly name?: string
    readonly value?: string
    readonly children?: ReadonlyArray<CueNode>
  }
  interface ParsedCue {
    readonly id: string
    readonly startTime: number
    readonly endTime: number
    readonly text: string
    readonly tree: { readonly children: ReadonlyArray<CueNode> }
  }
  interface ParseResult {
    readonly cues: ReadonlyArray<ParsedCue>
    readonly errors: ReadonlyArray<{ readonly message: string; readonly line: number; readonly col?: number }>
  }
  class WebVTTParser {
    parse(input: string, mode?: "metadata" | "chapters"): ParseResult
  }
  const webvtt: { readonly WebVTTParser: typeof WebVTTParser }
  export = webvtt
}
