import { describe, expect, it } from "vitest";
import { LocalAuthorizer, arnMatches } from "../../infra/local/api-gateway/authorizer";
import { allowPolicy, callerFromContext, callerToContext, chosenProtocol, grantScopes, hasScope, presentedCredential, stageWildcard, type Caller } from "../../shared/core/access";

const caller: Caller = { tenantId: "acme", keyId: "key_1", keyName: "ci", scopes: ["operator.read", "operator.write"], models: ["openai/gpt-4o-mini"], rateLimitPerMinute: 60 };
const METHOD_ARN = "arn:aws:execute-api:us-east-1:000000000000:abc123/prod/GET/v1/runs/run_1";

describe("scopes", () => {
  it("admin covers everything, write covers read, read covers only read", () => {
    expect(hasScope(["operator.admin"], "operator.approvals")).toBe(true);
    expect(hasScope(["operator.write"], "operator.read")).toBe(true);
    expect(hasScope(["operator.read"], "operator.write")).toBe(false);
    expect(hasScope(["operator.write"], "operator.approvals")).toBe(false);
  });

  it("an in-band connect gets the requested scopes the key holds, else all of the key's", () => {
    expect(grantScopes(["operator.read"], ["operator.admin", "operator.read"])).toEqual(["operator.read"]);
    expect(grantScopes(["operator.admin"], ["operator.read"])).toEqual(["operator.read"]);
    expect(grantScopes(["operator.read"], undefined)).toEqual(["operator.read"]);
    expect(grantScopes(["operator.read"], ["operator.write"])).toEqual(["operator.read"]);
  });
});

describe("credentials", () => {
  it("reads the bearer header first, then ?token=, then a bearer.<key> subprotocol", () => {
    expect(presentedCredential({ authorization: "Bearer k1", queryToken: "k2" })).toBe("k1");
    expect(presentedCredential({ queryToken: "k2", protocols: "bearer.k3" })).toBe("k2");
    expect(presentedCredential({ protocols: "openclaw, bearer.k3" })).toBe("k3");
    expect(presentedCredential({ protocols: "openclaw" })).toBeUndefined();
    expect(chosenProtocol("bearer.k3, openclaw")).toBe("openclaw");
    expect(chosenProtocol("bearer.k3")).toBe("bearer.k3");
  });

  it("round-trips a caller through the authorizer context (strings and numbers only)", () => {
    const context = callerToContext(caller);
    expect(Object.values(context).every((v) => ["string", "number", "boolean"].includes(typeof v))).toBe(true);
    expect(callerFromContext({ ...context, principalId: "key_1" })).toEqual(caller);
    expect(callerFromContext({ anonymous: true, principalId: "anonymous" })).toBeUndefined();
  });
});

describe("policy", () => {
  it("allows the whole stage, so a cached result serves the key's other routes", () => {
    expect(stageWildcard(METHOD_ARN)).toBe("arn:aws:execute-api:us-east-1:000000000000:abc123/prod/*");
    expect(arnMatches(stageWildcard(METHOD_ARN), "arn:aws:execute-api:us-east-1:000000000000:abc123/prod/POST/v1/agent")).toBe(true);
    expect(arnMatches(stageWildcard(METHOD_ARN), "arn:aws:execute-api:us-east-1:000000000000:other/prod/GET/x")).toBe(false);
  });
});

describe("the local authorizer", () => {
  const request = (authorization?: string) => ({ headers: (authorization ? { Authorization: authorization } : {}) as Record<string, string>, query: null, methodArn: METHOD_ARN, event: { type: "REQUEST" } });

  it("caches by identity source for the TTL, refuses a missing identity without invoking, maps Unauthorized to 401 and a deny to 403", async () => {
    let invocations = 0;
    const authorizer = new LocalAuthorizer({
      identitySources: ["method.request.header.Authorization"],
      ttlSeconds: 300,
      invoke: async (event) => {
        invocations += 1;
        const header = (event as { headers: Record<string, string> }).headers.Authorization;
        if (header === "Bearer good") return allowPolicy(METHOD_ARN, "key_1", callerToContext(caller));
        if (header === "Bearer denied") return { principalId: "x", policyDocument: { Version: "2012-10-17", Statement: [{ Action: "execute-api:Invoke", Effect: "Deny", Resource: "*" }] } };
        throw new Error("Unauthorized");
      },
    });
    expect(await authorizer.authorize(request())).toMatchObject({ kind: "deny", statusCode: 401 });
    expect(invocations).toBe(0);
    expect(await authorizer.authorize(request("Bearer good"))).toMatchObject({ kind: "allow", authorizer: { tenantId: "acme", principalId: "key_1" } });
    expect(await authorizer.authorize(request("Bearer good"))).toMatchObject({ kind: "allow" });
    expect(invocations).toBe(1);
    expect(await authorizer.authorize(request("Bearer bad"))).toMatchObject({ kind: "deny", statusCode: 401 });
    expect(await authorizer.authorize(request("Bearer denied"))).toMatchObject({ kind: "deny", statusCode: 403 });
  });
});
