import type { APIGatewayProxyEvent } from "aws-lambda";
import { callerFromContext, DEFAULT_RATE_LIMIT_PER_MINUTE, type Caller, type Scope } from "../../shared/core/access";
import { header } from "../../shared/http/rest";
import { ApiError } from "../../shared/protocol/errors";
import type { AppDeps } from "../../shared/runtime/app-deps";
import { authenticateCaller, bearerToken } from "../../shared/runtime/auth";
import { requireScope } from "../../shared/tenancy/guard";
import { enforceRateLimit } from "../../shared/tenancy/rate-limit";

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
