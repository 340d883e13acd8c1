import type { APIGatewayProxyEvent, Context } from "aws-lambda";
import { depsFromEnv } from "../../shared/runtime/app-deps";
import { createOpenAIHandler } from "./app";
import { lambdaStreamSink } from "./stream-sink";

let app: ReturnType<typeof createOpenAIHandler> | undefined;

/** Lambda entry: REST API proxy integration with response streaming (`responseTransferMode: STREAM`). */
export const handler = awslambda.streamifyResponse(async (event: APIGatewayProxyEvent, responseStream, context: Context) => {
  app ??= createOpenAIHandler(await depsFromEnv());
  await app(event, lambdaStreamSink(responseStream), context);
});
