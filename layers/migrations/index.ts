/** Numbered migrations, applied in order by the `@effect/sql` Migrator at start. Never edit a landed one. */
import foundation from "./0001_foundation.ts"
import usage from "./0002_usage.ts"
import customProviders from "./0100_custom_providers.ts"
import providerConnections from "./0101_provider_connections.ts"
import jobQueue from "./0200_job_queue.ts"
import domainEvents from "./0201_domain_events.ts"
import webhooks from "./0202_webhooks.ts"
import sessions from "./0400_sessions.ts"
import voiceRateLimits from "./0500_voice_rate_limits.ts"

export const migrations = {
  "0001_foundation": foundation,
  "0002_usage": usage,
  "0100_custom_providers": customProviders,
  "0101_provider_connections": providerConnections,
  "0200_job_queue": jobQueue,
  "0201_domain_events": domainEvents,
  "0202_webhooks": webhooks,
  "0400_sessions": sessions,
  "0500_voice_rate_limits": voiceRateLimits
}
