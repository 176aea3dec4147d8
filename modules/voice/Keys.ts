/**
 * Where voice finds a project's own (BYOK) provider keys. The provider-connections module owns them; this tag is
 * the seam: wire it with
 *   `Layer.effect(VoiceKeys, Effect.map(ProviderConnections, (c) => ({ byokKey: c.byokKey })))`
 * provided to `Voice.Default`. Unwired, it is a `Context.Reference` whose default knows no BYOK keys, so voice
 * then runs on managed keys only (and the auto-router answers 402 `byok_required`).
 */
import { Context, Effect, Layer, type Option, type Redacted } from "effect"

export interface ByokKey {
  readonly connectionId: string
  readonly apiKey: Redacted.Redacted
  /** The connection's own base URL, or null for the provider's default. */
  readonly baseUrl: string | null
  readonly apiFormat: string
}

export interface VoiceKeysService {
  readonly byokKey: (projectId: string, provider: string) => Effect.Effect<Option.Option<ByokKey>>
}

export class VoiceKeys extends Context.Reference<VoiceKeys>()("VoiceKeys", {
  defaultValue: (): VoiceKeysService => ({ byokKey: () => Effect.succeedNone })
}) {}

/** The explicit "no BYOK keys" layer (the same as leaving the reference unprovided). */
export const VoiceKeysNone = Layer.succeed(VoiceKeys, { byokKey: () => Effect.succeedNone })
