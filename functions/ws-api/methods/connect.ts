import * as z from "zod";
import { countFailedConnect, getConnection, markAuthenticated } from "../../../shared/aws/connections";
import { grantScopes, type Caller } from "../../../shared/core/access";
import { validate } from "../../../shared/http/rest";
import { ApiError } from "../../../shared/protocol/errors";
import { helloPayload } from "../../../shared/protocol/hello";
import { surfaceOfConnect } from "../../../shared/protocol/surface";
import { authenticateCaller } from "../../../shared/runtime/auth";
import type { AppDeps } from "../../../shared/runtime/app-deps";
import { MAX_FAILED_CONNECTS } from "../auth-deadline";
import type { Method } from "./types";

/**
 * `connect` params as OpenClaw's client sends them (`minProtocol`,
 * `maxProtocol`, `client`, `caps`, `auth:{token}`, `role`, `scopes`, and a
 * `device` signature off loopback, which we do not verify); `token` at the
 * top level is accepted too.
 */
export const ConnectParamsSchema = z.lazy(() => z.looseObject({
  auth: z.looseObject({ token: z.string().optional() }).optional(),
  token: z.string().optional(),
  caps: z.array(z.string()).optional(),
  role: z.string().optional(),
  scopes: z.array(z.string()).optional(),
  client: z.looseObject({ id: z.string().optional(), mode: z.string().optional() }).optional(),
}));

/**
 * The key in the frame wins; without one, a socket the $connect authorizer
 * let in with a key keeps that key's identity. Granted scopes are the
 * requested ones the key holds. A refusal counts against the socket: the
 * MAX_FAILED_CONNECTS-th closes it (details.closing tells the client).
 */
export function connectMethod(methodNames: () => readonly string[]): Method {
  return async (deps, { connectionId, params }) => {
    const parsed = validate(ConnectParamsSchema, params ?? {});
    const token = parsed.auth?.token ?? parsed.token;
    const caller = await callerOfConnect(deps, connectionId, token);
    if (!caller) throw await refused(deps, connectionId, token);
    const scopes = grantScopes(caller.scopes, parsed.scopes);
    const surface = surfaceOfConnect(parsed.caps, parsed.client?.mode);
    const grant = { caps: parsed.caps ?? [], scopes, surface, caller: { ...caller, scopes }, ...(parsed.client?.id ? { clientId: parsed.client.id } : {}) };
    await markAuthenticated(deps.db, connectionId, grant);
    return helloPayload({ connectionId, methods: methodNames(), role: parsed.role ?? "operator", scopes });
  };
}

async function callerOfConnect(deps: AppDeps, connectionId: string, token: string | undefined): Promise<Caller | undefined> {
  if (token) return authenticateCaller(deps.db, token, deps.runtime.authTokenSha256);
  return (await getConnection(deps.db, connectionId))?.caller;
}

async function refused(deps: AppDeps, connectionId: string, token: string | undefined): Promise<ApiError> {
  const failures = await countFailedConnect(deps.db, connectionId);
  const error = unauthorized(token);
  return failures >= MAX_FAILED_CONNECTS ? new ApiError(error.code, error.message, { ...error.details, closing: true, failedAttempts: failures }) : error;
}

/** OpenClaw's client prints `message` and does not retry on these details. */
function unauthorized(token: string | undefined): ApiError {
  if (!token) {
    return new ApiError("UNAUTHORIZED", "unauthorized: gateway token missing (set auth.token in connect)", {
      code: "AUTH_TOKEN_MISSING",
      authReason: "token_missing",
      canRetryWithDeviceToken: false,
      recommendedNextStep: "update_auth_credentials",
    });
  }
  return new ApiError("UNAUTHORIZED", "unauthorized: gateway token mismatch", {
    code: "AUTH_TOKEN_MISMATCH",
    authReason: "token_mismatch",
    canRetryWithDeviceToken: false,
    recommendedNextStep: "update_auth_credentials",
  });
}
