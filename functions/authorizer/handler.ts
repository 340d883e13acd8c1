import type { Context } from "aws-lambda";
import { createDynamoDocumentClient } from "../../shared/aws/dynamo-client";
import { runtimeConfigFromEnv } from "../../shared/config/runtime";
import { observedHandler } from "../../shared/observability/middleware";
import { powertools } from "../../shared/observability/powertools";
import { createAuthorizerHandler, type AuthorizerEvent } from "./app";

/**
 * Lambda entry: the REST API's REQUEST authorizer and the WebSocket API's
 * $connect authorizer. Slim on purpose: it needs the table and the
 * deployment token's digest, not the agent configuration. The same
 * observability middleware as every other function (Lambda context on every
 * log line, X-Ray, metrics).
 */
let app: ReturnType<typeof createAuthorizerHandler> | undefined;
export const handler = observedHandler(async (event: AuthorizerEvent, _context: Context) => {
  if (!app) {
    const runtime = runtimeConfigFromEnv();
    // DynamoDB only: no other client's code is even in this bundle.
    app = createAuthorizerHandler({ db: { doc: createDynamoDocumentClient(runtime), table: runtime.tableName, now: Date.now }, authTokenSha256: runtime.authTokenSha256, log: powertoolsLog() });
  }
  return app(event);
});

function powertoolsLog() {
  const { logger } = powertools();
  return {
    info: (message: string, extra?: Record<string, unknown>) => logger.info(message, { ...extra }),
    warn: (message: string, extra?: Record<string, unknown>) => logger.warn(message, { ...extra }),
    error: (message: string, extra?: Record<string, unknown>) => logger.error(message, { ...extra }),
  };
}
