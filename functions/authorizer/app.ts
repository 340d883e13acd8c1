import type { Db } from "../../shared/aws/dynamo";
import { allowPolicy, callerToContext, presentedCredential } from "../../shared/core/access";
import { authenticateCaller } from "../../shared/runtime/auth";
import type { Log } from "../../shared/ports/run-deps";

/**
 * The subset of a Lambda REQUEST authorizer event this function reads; REST
 * and WebSocket ($connect) authorizers send the same shape.
 */
export interface AuthorizerEvent {
  type?: string;
  methodArn: string;
  headers?: Record<string, string | undefined> | null;
  queryStringParameters?: Record<string, string | undefined> | null;
  requestContext?: { routeKey?: string; eventType?: string } | null;
}

export interface AuthorizerDeps {
  db: Db;
  authTokenSha256?: string;
  log: Log;
}

/**
 * Validates the caller's API key before any function runs. A valid key:
 * Allow on the whole stage, with its tenant, key id, name and scopes as the
 * context the integration receives in `requestContext.authorizer`. A wrong
 * key: `Unauthorized` (API Gateway answers 401). A WebSocket $connect with
 * no key at all is let in as anonymous, for OpenClaw clients that send the
 * key in their in-band `connect` frame (ws-api closes it after 10 s or 5
 * failed `connect` attempts).
 */
export function createAuthorizerHandler(deps: AuthorizerDeps) {
  return async (event: AuthorizerEvent) => {
    const headers = lowerCaseKeys(event.headers);
    const presented = presentedCredential({
      authorization: headers.authorization,
      queryToken: event.queryStringParameters?.token,
      protocols: headers["sec-websocket-protocol"],
    });
    const isConnect = event.requestContext?.routeKey === "$connect";
    if (!presented && isConnect) return allowPolicy(event.methodArn, "anonymous", { anonymous: true });
    const caller = await authenticateCaller(deps.db, presented, deps.authTokenSha256);
    if (!caller) {
      deps.log.info("authorizer refused a key", { methodArn: event.methodArn, presented: presented !== undefined });
      // The exact message API Gateway turns into a 401 (anything else is a 500).
      throw new Error("Unauthorized");
    }
    return allowPolicy(event.methodArn, caller.keyId, callerToContext(caller));
  };
}

function lowerCaseKeys(headers: Record<string, string | undefined> | null | undefined): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]));
}
