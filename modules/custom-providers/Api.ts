/**
 * Custom provider management (contract §4.5), for signed-in dashboard users of the project (session cookie,
 * not project keys). Errors are `{error: <message>}` (§7.2).
 */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import {
  CreateCustomProviderRequest,
  CustomProvider,
  CustomProviderDetail,
  CustomProviderWithModels,
  TestConnectionRequest,
  TestConnectionResult,
  UpdateCustomProviderRequest
} from "../../schemas/custom-providers.ts"
import { errorResponse } from "../../schemas/errors.ts"
import { DashboardAuth } from "../auth/Api.ts"

const ProjectPath = Schema.Struct({ projectId: Schema.String })
const ProviderPath = Schema.Struct({ projectId: Schema.String, providerId: Schema.String })

export class CustomProvidersApi extends HttpApiGroup.make("customProviders")
  .add(
    HttpApiEndpoint.post("create", "/api/projects/:projectId/providers")
      .setPath(ProjectPath)
      .setPayload(CreateCustomProviderRequest)
      .addSuccess(Schema.Struct({ provider: CustomProvider }), { status: 201 })
  )
  .add(
    HttpApiEndpoint.get("list", "/api/projects/:projectId/providers")
      .setPath(ProjectPath)
      .addSuccess(Schema.Struct({ providers: Schema.Array(CustomProviderWithModels) }))
  )
  .add(
    HttpApiEndpoint.get("get", "/api/projects/:projectId/providers/:providerId")
      .setPath(ProviderPath)
      .addSuccess(Schema.Struct({ provider: CustomProviderDetail }))
  )
  .add(
    HttpApiEndpoint.patch("update", "/api/projects/:projectId/providers/:providerId")
      .setPath(ProviderPath)
      .setPayload(UpdateCustomProviderRequest)
      .addSuccess(Schema.Struct({ provider: CustomProviderDetail }))
  )
  .add(
    HttpApiEndpoint.del("remove", "/api/projects/:projectId/providers/:providerId")
      .setPath(ProviderPath)
      .addSuccess(Schema.Struct({ success: Schema.Literal(true) }))
  )
  .add(
    HttpApiEndpoint.post("test", "/api/projects/:projectId/custom-providers/test")
      .setPath(ProjectPath)
      .setPayload(TestConnectionRequest)
      .addSuccess(TestConnectionResult)
  )
  .middleware(DashboardAuth)
  .addError(errorResponse("message", 400))
  .addError(errorResponse("message", 404))
{}
