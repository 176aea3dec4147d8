/** The whole HTTP contract: every module's HttpApiGroup, composed into one HttpApi (served and documented). */
import { HttpApi, OpenApi } from "@effect/platform"
import { AuthApi } from "../../modules/auth/Api.ts"
import { HealthApi } from "../../modules/health/Api.ts"
import { DashboardProjectsApi, ProjectsApi, WhoAmIApi } from "../../modules/projects/Api.ts"
import { WebhooksApi } from "../../modules/webhooks/Api.ts"

export class GatewayApi extends HttpApi.make("gateway")
  .add(HealthApi)
  .add(AuthApi)
  .add(ProjectsApi)
  .add(WhoAmIApi)
  .add(DashboardProjectsApi)
  .add(WebhooksApi)
  .annotateContext(OpenApi.annotations({
    title: "Embedded Agents Gateway",
    version: "1.1.0",
    description: "Gateway and platform for embedded AI agents. Contract: platform-interface 1.1.0."
  }))
{}
