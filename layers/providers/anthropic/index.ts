/** Anthropic Messages: `POST {base}/messages`, `x-api-key`, `anthropic-version: 2023-06-01`. */
import type { FamilyAdapter } from "../adapter.ts"
import { toAnthropicRequest } from "./request.ts"
import { decodeAnthropicResult, readAnthropicError } from "./response.ts"
import { makeAnthropicStreamMapper } from "./stream.ts"

export const AnthropicAdapter: FamilyAdapter = {
  family: "anthropic",
  buildRequest: toAnthropicRequest,
  decodeResult: decodeAnthropicResult,
  makeStreamMapper: makeAnthropicStreamMapper,
  readError: readAnthropicError
}
