/**
 * Provider connections (BYOK) and model syncs, with the project secret key (`Authorization: Bearer csk_…`).
 * Keys are write-only: no response carries them.
 */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { CursorList, CursorQuery, DeletedResponse } from "../../schemas/common.ts"
import { CreateProviderConnection, ModelSync, ProviderConnection, ProviderValidation, ValidateProviderKey } from "../../schemas/connections.ts"
import { errorResponse } from "../../schemas/errors.ts"
import { SecretKeyAuth } from "../auth/Api.ts"

const IdPath = Schema.Struct({ id: Schema.String })

export class ConnectionsApi extends HttpApiGroup.make("providerConnections")
  .add(
    HttpApiEndpoint.post("create", "/v1/provider-connections")
      .setPayload(CreateProviderConnection)
      .addSuccess(ProviderConnection, { status: 201 })
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/provider-connections")
      .setUrlParams(CursorQuery)
      .addSuccess(CursorList(ProviderConnection))
  )
  .add(
    HttpApiEndpoint.post("validateKey", "/v1/provider-connections/validate")
      .setPayload(ValidateProviderKey)
      .addSuccess(ProviderValidation)
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/provider-connections/:id")
      .setPath(IdPath)
      .addSuccess(ProviderConnection)
  )
  .add(
    HttpApiEndpoint.del("remove", "/v1/provider-connections/:id")
      .setPath(IdPath)
      .addSuccess(DeletedResponse)
  )
  .add(
    HttpApiEndpoint.post("validate", "/v1/provider-connections/:id/validate")
      .setPath(IdPath)
      .addSuccess(ProviderValidation)
  )
  .add(
    HttpApiEndpoint.post("sync", "/v1/provider-connections/:id/sync")
      .setPath(IdPath)
      .addSuccess(ModelSync, { status: 201 })
  )
  .add(
    HttpApiEndpoint.get("listSyncs", "/v1/provider-connections/:id/syncs")
      .setPath(IdPath)
      .setUrlParams(CursorQuery)
      .addSuccess(CursorList(ModelSync))
  )
  .add(
    HttpApiEndpoint.get("getSync", "/v1/provider-connections/:id/syncs/:syncId")
      .setPath(Schema.Struct({ id: Schema.String, syncId: Schema.String }))
      .addSuccess(ModelSync)
  )
  .middleware(SecretKeyAuth)
  .addError(errorResponse("platform", 400))
  .addError(errorResponse("platform", 404))
{}
