/** OpenAI and OpenAI-compatible upstreams: `POST {base}/chat/completions`, `Authorization: Bearer`. */
import { Either } from "effect"
import type { FamilyAdapter } from "../adapter.ts"
import { toOpenAIRequest } from "./request.ts"
import { decodeOpenAIResult, readOpenAIError } from "./response.ts"
import { makeOpenAIStreamMapper } from "./stream.ts"

export const OpenAIAdapter: FamilyAdapter = {
  family: "openai",
  buildRequest: (target, request, stream) => Either.right(toOpenAIRequest(target, request, stream)),
  decodeResult: decodeOpenAIResult,
  makeStreamMapper: makeOpenAIStreamMapper,
  readError: readOpenAIError
}
