import type { APIGatewayProxyEvent } from "aws-lambda";
import { callerFromContext, DEFAULT_RATE_LIMIT_PER_MINUTE, type Caller, type Scope } from "../core/access";
import { header } from "../http/rest";
import { ApiError } from "../protocol/errors";
import type { AppDeps } from "./app-deps";
import { authenticateCaller, bearerToken } from "./auth";
import { requireScope } from "../tenancy/guard";
import { enforceRateLimit } from "../tenancy/rate-limit";

/**
 * Who calls: the authorizer's context (API Gateway ran it before this
 * function), or, invoked without one (direct invocations, tests), the
 * bearer key checked here. Then the route's scope and the key's rate limit.
 */
export async function admitRestCaller(deps: AppDeps, event: APIGatewayProxyEvent, scope: Scope): Promise<Caller> {
  const caller =
    callerFromContext(event.requestContext?.authorizer as Record<string, unknown> | undefined) ??
    (await authenticateCaller(deps.db, bearerToken(header(event, "authorization")), deps.runtime.authTokenSha256));
  if (!caller) throw new ApiError("UNAUTHORIZED", "missing or invalid bearer token");
  requireScope(caller, scope);
  await enforceRateLimit(deps.db, caller, DEFAULT_RATE_LIMIT_PER_MINUTE);
  return caller;
}
