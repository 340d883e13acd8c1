import { describe, expect, it } from "vitest";
import type { APIGatewayProxyEvent } from "aws-lambda";
import { createRouter, decodePathParams, requestPath } from "../../shared/http/router";
import { ApiError } from "../../shared/protocol/errors";

const router = createRouter([
  { method: "POST", path: "/v1/agent", route: "agent" },
  { method: "GET", path: "/v1/runs/{runId}", route: "run" },
  { method: "POST", path: "/v1/runs/{runId}/approvals/{approvalId}", route: "approval" },
  { method: "GET", path: "/v1/models/{id+}", route: "model" },
  { method: "GET", path: "/v1/a.b", route: "literal" },
]);

describe("shared/http router", () => {
  it("resolves a route with its raw path parameters", () => {
    expect(router.resolve("POST", "/v1/agent")).toEqual({ kind: "found", route: "agent", rawParams: {} });
    expect(router.resolve("POST", "/v1/runs/r%2F1/approvals/r1.apr_x")).toEqual({ kind: "found", route: "approval", rawParams: { runId: "r%2F1", approvalId: "r1.apr_x" } });
  });

  it("a `{name+}` parameter takes the rest of the path, a `{name}` one segment only", () => {
    expect(router.resolve("GET", "/v1/models/openclaw/main")).toEqual({ kind: "found", route: "model", rawParams: { id: "openclaw/main" } });
    expect(router.resolve("GET", "/v1/runs/a/b")).toEqual({ kind: "not-found" });
    expect(router.resolve("GET", "/v1/runs/")).toEqual({ kind: "not-found" });
  });

  it("literal segments match literally (a dot is not a wildcard)", () => {
    expect(router.resolve("GET", "/v1/a.b").kind).toBe("found");
    expect(router.resolve("GET", "/v1/aXb")).toEqual({ kind: "not-found" });
  });

  it("a known path with another method lists the methods it allows", () => {
    expect(router.resolve("GET", "/v1/agent")).toEqual({ kind: "method-not-allowed", allowed: ["POST"] });
    expect(router.resolve("DELETE", "/v1/runs/r1")).toEqual({ kind: "method-not-allowed", allowed: ["GET"] });
  });

  it("decodes parameters; a malformed escape is an INVALID_REQUEST naming the parameter", () => {
    expect(decodePathParams({ runId: "r%2F1" })).toEqual({ runId: "r/1" });
    const error = (() => {
      try {
        decodePathParams({ runId: "%ZZ" });
      } catch (thrown) {
        return thrown;
      }
    })();
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe("INVALID_REQUEST");
    expect((error as ApiError).message).toBe("path parameter runId has a malformed percent-encoding");
  });

  it("strips the stage prefix the default endpoint may leave on the path", () => {
    const event = (path: string, stage?: string) => ({ path, requestContext: stage ? { stage } : undefined }) as unknown as APIGatewayProxyEvent;
    expect(requestPath(event("/prod/v1/agent", "prod"))).toBe("/v1/agent");
    expect(requestPath(event("/v1/agent", "prod"))).toBe("/v1/agent");
    expect(requestPath(event("/production/v1", "prod"))).toBe("/production/v1");
    expect(requestPath(event(""))).toBe("/");
  });
});
