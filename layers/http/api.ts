/** The whole HTTP contract: every module's HttpApiGroup, composed into one HttpApi (served and documented). */
import { HttpApi, OpenApi } from "@effect/platform"
import { AuthApi } from "../../modules/auth/Api.ts"
import { CatalogApi } from "../../modules/catalog/Api.ts"
import { ChatApi, OpenAiChatApi } from "../../modules/chat/Api.ts"
import { ConnectionsApi } from "../../modules/connections/Api.ts"
import { CustomProvidersApi } from "../../modules/custom-providers/Api.ts"
import { HealthApi } from "../../modules/health/Api.ts"
import { ModelsApi } from "../../modules/models/Api.ts"
import { DashboardProjectsApi, ProjectsApi, WhoAmIApi } from "../../modules/projects/Api.ts"
import { SessionsApi } from "../../modules/sessions/Api.ts"
import { UsageApi } from "../../modules/usage/Api.ts"
import { VisionApi } from "../../modules/vision/Api.ts"
import { VoiceApi } from "../../modules/voice/Api.ts"
import { WebhooksApi } from "../../modules/webhooks/Api.ts"

export class GatewayApi extends HttpApi.make("gateway")
  .add(HealthApi)
  .add(AuthApi)
  .add(ProjectsApi)
  .add(WhoAmIApi)
  .add(UsageApi)
  .add(DashboardProjectsApi)
  .add(CatalogApi)
  .add(ModelsApi)
  .add(CustomProvidersApi)
  .add(ConnectionsApi)
  .add(ChatApi)
  .add(OpenAiChatApi)
  .add(VisionApi)
  .add(VoiceApi)
  .add(SessionsApi)
  .add(WebhooksApi)
  .annotateContext(OpenApi.annotations({
    title: "Embedded Agents Gateway",
    version: "1.1.0",
    description: "Gateway and platform for embedded AI agents. Contract: platform-interface 1.1.0."
  }))
{}
