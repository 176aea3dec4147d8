/**
 * A fake OpenAI-format upstream (providers.md): `GET /v1/models` and `POST /v1/chat/completions` with
 * `Authorization: Bearer <key>`, OpenAI error bodies, scriptable models, reply, delay and failure.
 */
import { startFakeServer } from "./catalog-server.ts"

export interface FakeOpenAIModel {
  readonly id: string
  readonly owned_by?: string
  readonly created?: number
}

const openaiError = (status: number, message: string, type: string, code: string | null) => ({
  status,
  body: { error: { message, type, param: null, code } }
})

export const startFakeOpenAI = async (options: { apiKey?: string | null; models?: ReadonlyArray<FakeOpenAIModel> } = {}) => {
  const state = {
    /** The key the fake accepts; null accepts requests without a key. */
    apiKey: options.apiKey === undefined ? "sk-fake-openai" : options.apiKey,
    models: [...(options.models ?? [{ id: "gpt-4o", owned_by: "openai", created: 1715367049 }])],
    reply: "ok"
  }
  const server = await startFakeServer((request) => {
    if (state.apiKey !== null && request.headers.authorization !== `Bearer ${state.apiKey}`) {
      return openaiError(401, "Incorrect API key provided.", "invalid_request_error", "invalid_api_key")
    }
    if (request.method === "GET" && request.path === "/v1/models") {
      return {
        status: 200,
        body: {
          object: "list",
          data: state.models.map((m) => ({ id: m.id, object: "model", created: m.created ?? 1700000000, owned_by: m.owned_by ?? "system" }))
        }
      }
    }
    if (request.method === "POST" && request.path === "/v1/chat/completions") {
      const body = typeof request.body === "object" && request.body !== null ? request.body : {}
      const model = "model" in body && typeof body.model === "string" ? body.model : "unknown"
      if (!state.models.some((m) => m.id === model)) {
        return openaiError(404, `The model \`${model}\` does not exist or you do not have access to it.`, "invalid_request_error", "model_not_found")
      }
      return {
        status: 200,
        body: {
          id: "chatcmpl-fake",
          object: "chat.completion",
          created: 1700000000,
          model,
          choices: [{ index: 0, message: { role: "assistant", content: state.reply }, finish_reason: "length" }],
          usage: { prompt_tokens: 12, completion_tokens: 1, total_tokens: 13 }
        }
      }
    }
    return openaiError(404, `Unknown path ${request.path}`, "invalid_request_error", null)
  })
  return { ...server, baseUrl: `${server.origin}/v1`, state }
}

export type FakeOpenAI = Awaited<ReturnType<typeof startFakeOpenAI>>
