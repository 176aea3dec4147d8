/** Small fetch helpers for tests that talk to the real server. */
export interface Call {
  readonly status: number
  readonly headers: Headers
  readonly body: unknown
  readonly text: string
}

export const call = async (
  baseUrl: string,
  method: string,
  path: string,
  options: { readonly headers?: Record<string, string>; readonly json?: unknown; readonly body?: string } = {}
): Promise<Call> => {
  const headers: Record<string, string> = { ...options.headers }
  let body: string | undefined = options.body
  if (options.json !== undefined) {
    headers["content-type"] = "application/json"
    body = JSON.stringify(options.json)
  } else if (body !== undefined && headers["content-type"] === undefined) {
    headers["content-type"] = "application/json"
  }
  const response = await fetch(baseUrl + path, body === undefined ? { method, headers } : { method, headers, body })
  const text = await response.text()
  let parsed: unknown = undefined
  try {
    parsed = text.length > 0 ? JSON.parse(text) : undefined
  } catch {
    parsed = undefined
  }
  return { status: response.status, headers: response.headers, body: parsed, text }
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
export const serviceKey = (key: string) => ({ SERVICE_API_KEY: key })
