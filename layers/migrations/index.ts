/** Numbered migrations, applied in order by the `@effect/sql` Migrator at start. Never edit a landed one. */
import foundation from "./0001_foundation.ts"
import jobQueue from "./0200_job_queue.ts"
import domainEvents from "./0201_domain_events.ts"
import webhooks from "./0202_webhooks.ts"

export const migrations = {
  "0001_foundation": foundation,
  "0200_job_queue": jobQueue,
  "0201_domain_events": domainEvents,
  "0202_webhooks": webhooks
}
