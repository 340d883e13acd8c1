import { z } from "zod";
import { markAuthenticated } from "../../../shared/aws/connections";
import { validate } from "../../../shared/http/rest";
import { ApiError } from "../../../shared/protocol/errors";
import { grantedScopes, helloPayload } from "../../../shared/protocol/hello";
import { authenticate } from "../../../shared/runtime/auth";
import type { Method } from "./types";

/**
 * `connect` params as OpenClaw's client sends them (`minProtocol`,
 * `maxProtocol`, `client`, `caps`, `auth:{token}`, `role`, `scopes`, and a
 * `device` signature off loopback, which we do not verify); `token` at the
 * top level is accepted too.
 */
export const ConnectParamsSchema = z.looseObject({
  auth: z.looseObject({ token: z.string().optional() }).optional(),
  token: z.string().optional(),
  caps: z.array(z.string()).optional(),
  role: z.string().optional(),
  scopes: z.array(z.string()).optional(),
  client: z.looseObject({ id: z.string().optional() }).optional(),
});

export function connectMethod(methodNames: () => readonly string[]): Method {
  return async (deps, { connectionId, params }) => {
    const parsed = validate(ConnectParamsSchema, params ?? {});
    const token = parsed.auth?.token ?? parsed.token;
    if (!(await authenticate(deps.db, token, deps.runtime.authTokenSha256))) throw unauthorized(token);
    const scopes = grantedScopes(parsed.scopes);
    await markAuthenticated(deps.db, connectionId, { caps: parsed.caps ?? [], scopes, ...(parsed.client?.id ? { clientId: parsed.client.id } : {}) });
    return helloPayload({ connectionId, methods: methodNames(), role: parsed.role ?? "operator", scopes });
  };
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
