/** Common contract shapes (§2.1, §2.2). */
import { Schema } from "effect"

/** `DeletedResponse`: `{id, deleted, status}`. */
export const DeletedResponse = Schema.Struct({
  id: Schema.String,
  deleted: Schema.Boolean,
  status: Schema.String
}).annotations({ identifier: "DeletedResponse" })

/** `ClientToken`: a short-lived browser credential with prefix `ect_`. */
export const ClientToken = Schema.Struct({
  token: Schema.String,
  expires_at: Schema.String
}).annotations({ identifier: "ClientToken" })

/** Opaque cursor pagination shared by every `/v1` list: `{data, next_cursor}`. */
export const CursorList = <A, I, R>(item: Schema.Schema<A, I, R>) =>
  Schema.Struct({ data: Schema.Array(item), next_cursor: Schema.NullOr(Schema.String) })

/** Query of a cursor list: `limit` (1..100, default 20) and `cursor` (from `next_cursor`). */
export const CursorQuery = Schema.Struct({
  limit: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 100))),
  cursor: Schema.optional(Schema.String)
})
