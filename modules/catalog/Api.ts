/**
 * The public catalog (contract §4.4): models, providers and provider logos. No authentication; responses are
 * cacheable for an hour at shared caches (`s-maxage=3600`) and carry an ETag.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { CatalogModelList, CatalogModelQuery, CatalogProviderList } from "../../schemas/catalog.ts"
import { errorResponse } from "../../schemas/errors.ts"

export class CatalogApi extends HttpApiGroup.make("catalog")
  .add(
    HttpApiEndpoint.get("listModels", "/api/models")
      .setUrlParams(CatalogModelQuery)
      .addSuccess(CatalogModelList)
      .addError(errorResponse("flat", 400))
  )
  .add(
    HttpApiEndpoint.get("listProviders", "/api/providers")
      .addSuccess(CatalogProviderList)
  )
  .add(
    HttpApiEndpoint.get("providerLogo", "/api/providers/:id/logo")
      .setPath(Schema.Struct({ id: Schema.String }))
      .addSuccess(HttpApiSchema.Text({ contentType: "image/svg+xml" }))
      .addError(errorResponse("flat", 404))
  )
{}
