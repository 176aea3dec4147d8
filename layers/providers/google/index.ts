/** Google Gemini: `POST {base}/models/{model}:generateContent` and `:streamGenerateContent?alt=sse`, `x-goog-api-key`. */
import type { FamilyAdapter } from "../adapter.ts"
import { toGoogleRequest } from "./request.ts"
import { decodeGoogleResult, readGoogleError } from "./response.ts"
import { makeGoogleStreamMapper } from "./stream.ts"

export const GoogleAdapter: FamilyAdapter = {
  family: "google",
  buildRequest: toGoogleRequest,
  decodeResult: decodeGoogleResult,
  makeStreamMapper: makeGoogleStreamMapper,
  readError: readGoogleError
}
