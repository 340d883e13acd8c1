/**
 * The OpenAI-compatible routes of the REST API (docs/openai-api.md): explicit
 * resources under `/v1` integrated with the `openai-api` function through a
 * response-streaming Lambda proxy integration (`responseTransferMode:
 * STREAM`, up to 15 minutes), so `stream: true` is real SSE and a long
 * answer is not cut at 29 s. Every other `/v1/...` path keeps going to
 * `rest-api` through `/v1/{proxy+}` (API Gateway matches the most specific
 * resource and does not fall back from `/v1` to the root's `{proxy+}`).
 */
import { Duration } from "aws-cdk-lib";
import { LambdaIntegration, Resource, ResponseTransferMode, type IResource, type IRestApi } from "aws-cdk-lib/aws-apigateway";
import type { IFunction } from "aws-cdk-lib/aws-lambda";
import { OPENAI_ROUTES } from "./routes-openai";

/** API Gateway's cap for a streamed integration response. */
export const OPENAI_STREAM_TIMEOUT = Duration.minutes(15);

export function addOpenAIRoutes(api: IRestApi, openaiFn: IFunction, restFn: IFunction): void {
  // The `/v1` resource may exist already (public webhook resources live under it); its methods inherit the API's authorizer.
  const v1 = api.root.getResource("v1") ?? new Resource(api.root, "v1", { parent: api.root, pathPart: "v1" });
  v1.addProxy({ defaultIntegration: new LambdaIntegration(restFn), anyMethod: true });
  const streaming = new LambdaIntegration(openaiFn, { responseTransferMode: ResponseTransferMode.STREAM, timeout: OPENAI_STREAM_TIMEOUT });
  for (const route of OPENAI_ROUTES) {
    const resource = route.path.split("/").slice(2).reduce<IResource>((parent, part) => parent.getResource(part) ?? parent.addResource(part), v1);
    resource.addMethod(route.method, streaming);
  }
}
