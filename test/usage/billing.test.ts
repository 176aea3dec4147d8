import { Effect, Either } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { costOf, providerCost } from "../../modules/usage/cost.ts"
import { Billing } from "../../modules/usage/Service.ts"
import { type Gateway, startGateway } from "../harness.ts"
import { bearer, call } from "../http.ts"

let gw: Gateway
beforeAll(async () => {
  gw = await startGateway()
})
afterAll(() => gw?.close())

describe("cost", () => {
  const prices = { input_per_million: 2, output_per_million: 8, cached_input_per_million: 0.5 }

  it("prices prompt, cached and completion tokens per million", () => {
    expect(providerCost(prices, { promptTokens: 1_000_000, cachedTokens: 200_000, completionTokens: 500_000 })).toBeCloseTo(
      0.8 * 2 + 0.2 * 0.5 + 0.5 * 8,
      8
    )
  })

  it("an unknown price is null, never 0", () => {
    expect(providerCost(null, { promptTokens: 10 })).toBeNull()
    expect(providerCost({ input_per_million: 1 }, { promptTokens: 10, completionTokens: 5 })).toBeNull()
  })

  it("managed keys add the markup; BYOK carries no service charge", () => {
    expect(costOf({ prices, use: { promptTokens: 1_000_000 }, keySource: "managed", markupPercentage: 10 })).toEqual({
      providerCostUsd: 2,
      serviceChargeUsd: 0.2,
      markupPercentage: 10
    })
    expect(costOf({ prices, use: { promptTokens: 1_000_000 }, keySource: "byok", markupPercentage: 10 })).toEqual({
      providerCostUsd: 2,
      serviceChargeUsd: 0,
      markupPercentage: 0
    })
  })

  it("voice units: per 1,000 characters and per minute", () => {
    expect(providerCost({ per_1k_chars: 0.015 }, { characters: 2000 })).toBeCloseTo(0.03, 8)
    expect(providerCost({ per_minute: 0.006 }, { audioSeconds: 90 })).toBeCloseTo(0.009, 8)
  })
})

describe("credits", () => {
  it("concurrent holds never overdraw a credit-gated balance", async () => {
    const project = await gw.createProject()
    const outcomes = await gw.run(Effect.gen(function*() {
      const billing = yield* Billing
      yield* billing.configure(project.id, { creditGated: true, creditBalanceUsd: 1 })
      return yield* Effect.all(
        Array.from({ length: 25 }, () =>
          billing.authorize(project.id, { model: "m", estimateUsd: 0.1, keySource: "managed" }).pipe(Effect.either)),
        { concurrency: "unbounded" }
      )
    }))
    expect(outcomes.filter(Either.isRight)).toHaveLength(10)
    const refused = outcomes.filter(Either.isLeft).map((e) => e.left.code)
    expect(new Set(refused)).toEqual(new Set(["credit_balance_exhausted"]))
    const settings = await gw.run(Effect.flatMap(Billing, (b) => b.settings(project.id)))
    expect(settings.creditBalanceUsd).toBeCloseTo(0, 8)
  })

  it("settle debits the actual cost and returns the rest of the hold", async () => {
    const project = await gw.createProject()
    const balance = await gw.run(Effect.gen(function*() {
      const billing = yield* Billing
      yield* billing.configure(project.id, { creditGated: true, creditBalanceUsd: 5 })
      const hold = yield* billing.authorize(project.id, { model: "m", estimateUsd: 1, keySource: "managed" })
      yield* billing.settle(hold, { providerCostUsd: 0.25, serviceChargeUsd: 0.05, markupPercentage: 20 }, "managed")
      return (yield* billing.settings(project.id)).creditBalanceUsd
    }))
    expect(balance).toBeCloseTo(4.7, 8)
  })

  it("an unpriced model is refused on a credit-gated project, allowed elsewhere", async () => {
    const gated = await gw.createProject()
    const result = await gw.run(Effect.gen(function*() {
      const billing = yield* Billing
      yield* billing.configure(gated.id, { creditGated: true, creditBalanceUsd: 5 })
      const refused = yield* billing.authorize(gated.id, { model: "x", estimateUsd: null, keySource: "managed" }).pipe(Effect.flip)
      const free = yield* billing.authorize(gw.project.id, { model: "x", estimateUsd: null, keySource: "managed" })
      return { refused: refused.code, free: free.amount }
    }))
    expect(result).toEqual({ refused: "unpriced_model", free: 0 })
  })
})

describe("usage ledger", () => {
  it("recorded rows are listed newest first with cursor pagination", async () => {
    const project = await gw.createProject()
    await gw.run(Effect.gen(function*() {
      const billing = yield* Billing
      for (let i = 0; i < 3; i++) {
        yield* billing.record({
          projectId: project.id,
          kind: "chat",
          model: `model-${i}`,
          provider: "openai",
          keySource: "managed",
          promptTokens: 10,
          completionTokens: 5,
          cost: { providerCostUsd: null, serviceChargeUsd: 0, markupPercentage: 0 },
          pricingStatus: "unpriced",
          latencyMs: 12,
          status: "succeeded"
        })
        yield* Effect.sleep("2 millis")
      }
    }))
    const first = await call(gw.baseUrl, "GET", "/v1/usage?limit=2", { headers: bearer(project.secretKey) })
    expect(first.status).toBe(200)
    const page = first.body as { data: Array<{ model: string; cost: { providerCostUsd: unknown }; pricing_status: string }>; next_cursor: string }
    expect(page.data.map((row) => row.model)).toEqual(["model-2", "model-1"])
    expect(page.data[0]?.cost.providerCostUsd).toBeNull()
    expect(page.data[0]?.pricing_status).toBe("unpriced")
    const second = await call(gw.baseUrl, "GET", `/v1/usage?limit=2&cursor=${page.next_cursor}`, { headers: bearer(project.secretKey) })
    expect((second.body as { data: Array<{ model: string }>; next_cursor: null }).data.map((r) => r.model)).toEqual(["model-0"])
    expect((second.body as { next_cursor: null }).next_cursor).toBeNull()
  })
})
