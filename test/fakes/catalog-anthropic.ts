/**
 * A fake Anthropic-format upstream (providers.md): `GET /v1/models` (paged with `has_more`, `last_id`,
 * `after_id`) and `POST /v1/messages`, requiring `x-api-key` and `anthropic-version`, with Anthropic error bodies.
 */
import { startFakeServer } from "./catalog-server.ts"

export interface FakeAnthropicModel {
  readonly id: string
  readonly display_name: string
  readonly created_at?: string
}

const anthropicError = (status: number, type: string, message: string) => ({
  status,
  body: { type: "error", error: { type, message }, request_id: "req_fake" }
})

export const startFakeAnthropic = async (options: { apiKey?: string; models?: ReadonlyArray<FakeAnthropicModel>; pageSize?: number } = {}) => {
  const state = {
    apiKey: options.apiKey ?? "sk-ant-fake",
    models: [...(options.models ?? [{ id: "claude-sonnet-4-20250514", display_name: "Claude Sonnet 4" }])],
    pageSize: options.pageSize ?? 1000,
    reply: "ok"
  }
  const server = await startFakeServer((request) => {
    if (request.headers["anthropic-version"] === undefined) {
      return anthropicError(400, "invalid_request_error", "anthropic-version header is required")
    }
    if (request.headers["x-api-key"] !== state.apiKey) {
      return anthropicError(401, "authentication_error", "invalid x-api-key")
    }
    if (request.method === "GET" && request.path === "/v1/models") {
      const after = request.query.get("after_id")
      const limit = Math.min(Number(request.query.get("limit") ?? "20"), state.pageSize)
      const start = after === null ? 0 : state.models.findIndex((m) => m.id === after) + 1
      const page = state.models.slice(start, start + limit)
      return {
        status: 200,
        body: {
          data: page.map((m) => ({ type: "model", id: m.id, display_name: m.display_name, created_at: m.created_at ?? "2025-05-14T00:00:00Z" })),
          has_more: start + limit < state.models.length,
          first_id: page[0]?.id ?? null,
          last_id: page[page.length - 1]?.id ?? null
        }
      }
    }
    if (request.method === "POST" && request.path === "/v1/messages") {
      const body = typeof request.body === "object" && request.body !== null ? request.body : {}
      const model = "model" in body && typeof body.model === "string" ? body.model : "unknown"
      return {
        status: 200,
        body: {
          id: "msg_fake",
          type: "message",
          role: "assistant",
          model,
          content: [{ type: "text", text: state.reply }],
          stop_reason: "max_tokens",
          stop_sequence: null,
          usage: { input_tokens: 14, output_tokens: 2 }
        }
      }
    }
    return anthropicError(404, "not_found_error", `Unknown path ${request.path}`)
  })
  return { ...server, baseUrl: `${server.origin}/v1`, state }
}

export type FakeAnthropic = Awaited<ReturnType<typeof startFakeAnthropic>>
