/** Signs a new dashboard user of a project in and answers the session cookie header. */
import { expect } from "vitest"
import type { Gateway } from "../harness.ts"
import { call } from "../http.ts"

export const signIn = async (gw: Gateway, projectId: string): Promise<Record<string, string>> => {
  const user = await gw.createUser(projectId)
  const res = await call(gw.baseUrl, "POST", "/api/auth/login", { json: user })
  expect(res.status).toBe(200)
  const cookie = res.headers.get("set-cookie")?.split(";")[0]
  expect(cookie).toMatch(/^eap_session=/)
  return { cookie: cookie ?? "" }
}
