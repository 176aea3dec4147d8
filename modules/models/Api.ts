/**
 * `GET /api/v1/models` (contract §4.4): the project's model list, OpenAI-compatible (`models.list()` of the
 * official SDK works with `baseURL` `<gateway>/api/v1` and the project API key as its `apiKey`).
 */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { ModelList, ModelListQuery } from "../../schemas/catalog.ts"
import { errorResponse } from "../../schemas/errors.ts"
import { ModelsAuth } from "../auth/Api.ts"

export class ModelsApi extends HttpApiGroup.make("models")
  .add(
    HttpApiEndpoint.get("list", "/api/v1/models")
      .setUrlParams(ModelListQuery)
      .addSuccess(ModelList)
  )
  .middleware(ModelsAuth)
  .addError(errorResponse("platform", 400))
{}
