import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
// ajv 8 is in node_modules through @modelcontextprotocol/sdk; only this test uses it.
import Ajv2020 from "ajv/dist/2020.js";
import { OPENAI_ROUTES } from "../../infra/routes-openai";
import { WS_METHOD_ROUTES } from "../../infra/routes";
import { SERVER_EVENTS } from "../../shared/protocol/hello";
import { REPO_ROOT, renderApiDocuments } from "../../scripts/api-docs/render";
import { cliAgent, cliAgentsList, cliChatAbort, cliConnect } from "../support/openclaw-frames";
import { sampleEvent } from "../support/events";

/**
 * The API documents: docs/openapi.json (REST, OpenAPI 3.1) and docs/schemas/
 * (WebSocket frames, JSON Schema 2020-12), generated from the zod schemas.
 * Stale files fail here (regenerate with `npm run docs:api`); the OpenAPI
 * document is linted against the 3.1 rules that can be checked structurally.
 */
const rendered = renderApiDocuments();
const docs = join(REPO_ROOT, "docs");
const openapi = JSON.parse(readFileSync(join(docs, "openapi.json"), "utf8"));
const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

type Operation = { operationId?: string; responses?: Record<string, { description?: string }>; parameters?: { name: string; in: string; required?: boolean }[]; security?: Record<string, unknown>[] };

function operations(): { path: string; method: string; op: Operation }[] {
  return Object.entries(openapi.paths as Record<string, Record<string, Operation>>).flatMap(([path, item]) =>
    Object.entries(item).filter(([method]) => METHODS.includes(method)).map(([method, op]) => ({ path, method, op })),
  );
}

function refs(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((v) => refs(v, found));
  else if (value && typeof value === "object") {
    for (const [key, v] of Object.entries(value)) {
      if (key === "$ref" && typeof v === "string") found.push(v);
      else refs(v, found);
    }
  }
  return found;
}

function resolvePointer(doc: unknown, ref: string): unknown {
  if (!ref.startsWith("#/")) return undefined;
  return ref.slice(2).split("/").map((part) => part.replaceAll("~1", "/").replaceAll("~0", "~")).reduce<unknown>((node, key) => (node && typeof node === "object" ? (node as Record<string, unknown>)[key] : undefined), doc);
}

describe("checked-in API documents are current", () => {
  it("docs/openapi.json is what the zod schemas generate (npm run docs:api)", () => {
    expect(readFileSync(join(docs, "openapi.json"), "utf8")).toBe(rendered.openapi);
  });

  it("docs/schemas/ holds exactly the generated WebSocket frame schemas", () => {
    const files = readdirSync(join(docs, "schemas")).filter((f) => f.endsWith(".json")).sort();
    expect(files).toEqual(Object.keys(rendered.schemas).sort());
    for (const file of files) expect(readFileSync(join(docs, "schemas", file), "utf8"), file).toBe(rendered.schemas[file]);
  });
});

describe("OpenAPI 3.1 lint", () => {
  it("declares 3.1 with info and paths", () => {
    expect(openapi.openapi).toMatch(/^3\.1\.\d+$/);
    expect(typeof openapi.info.title).toBe("string");
    expect(typeof openapi.info.version).toBe("string");
    for (const path of Object.keys(openapi.paths)) expect(path.startsWith("/")).toBe(true);
  });

  it("every operation has a unique operationId and described responses with valid status codes", () => {
    const ids = operations().map(({ op }) => op.operationId);
    expect(ids.every((id) => typeof id === "string" && id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    for (const { path, method, op } of operations()) {
      const responses = Object.entries(op.responses ?? {});
      expect(responses.length, `${method} ${path}`).toBeGreaterThan(0);
      for (const [status, response] of responses) {
        expect(status).toMatch(/^([1-5](\d\d|XX)|default)$/);
        expect(typeof response.description, `${method} ${path} ${status}`).toBe("string");
      }
    }
  });

  it("path templates and path parameters match one to one; parameters are unique per location", () => {
    for (const { path, method, op } of operations()) {
      const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
      const params = op.parameters ?? [];
      const inPath = params.filter((p) => p.in === "path");
      expect(inPath.map((p) => p.name).sort(), `${method} ${path}`).toEqual(templated);
      expect(inPath.every((p) => p.required === true)).toBe(true);
      for (const p of params) expect(["query", "header", "path", "cookie"]).toContain(p.in);
      expect(new Set(params.map((p) => `${p.in}:${p.name}`)).size).toBe(params.length);
    }
  });

  it("every $ref resolves and every security requirement names a defined scheme", () => {
    const all = refs(openapi);
    expect(all.length).toBeGreaterThan(0);
    for (const ref of all) expect(resolvePointer(openapi, ref), ref).toBeDefined();
    const schemes = Object.keys(openapi.components?.securitySchemes ?? {});
    for (const { op } of operations()) for (const requirement of op.security ?? []) for (const name of Object.keys(requirement)) expect(schemes).toContain(name);
  });

  it("component schemas are valid JSON Schema 2020-12 (OpenAPI 3.1's dialect)", () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    for (const [name, schema] of Object.entries(openapi.components.schemas as Record<string, object>)) {
      expect(() => ajv.compile({ ...schema, $id: `urn:component:${name}` }), name).not.toThrow();
    }
  });

  it("documents every REST route, the OpenAI-compatible ones included", () => {
    const documented = new Set(operations().map(({ path, method }) => `${method.toUpperCase()} ${path}`));
    for (const route of OPENAI_ROUTES) expect(documented).toContain(`${route.method} ${route.path}`);
    for (const route of ["POST /v1/agent", "GET /v1/runs/{runId}", "GET /v1/runs/{runId}/events", "POST /v1/runs/{runId}/wait", "POST /v1/runs/{runId}/abort", "GET /v1/sessions/{sessionKey}/history", "GET /openapi.json", "GET /health", "POST /v1/runs/{runId}/approvals/{approvalId}", "GET /v1/sessions", "GET /v1/runs/{runId}/trace"]) {
      expect(documented).toContain(route);
    }
  });
});

describe("WebSocket frame schemas", () => {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  const schema = (file: string) => JSON.parse(readFileSync(join(docs, "schemas", file), "utf8"));

  it("exist for every method route and every event the server sends", () => {
    for (const method of WS_METHOD_ROUTES) expect(rendered.schemas).toHaveProperty([`ws-request.${method}.json`]);
    for (const event of SERVER_EVENTS) expect(rendered.schemas).toHaveProperty([`ws-event.${event}.json`]);
    expect(rendered.schemas).toHaveProperty(["ws-response.json"]);
  });

  it("accept the frames OpenClaw's CLI sends and the sample events, and reject a malformed one", () => {
    const validators = new Map<string, ReturnType<typeof ajv.compile>>();
    const check = (file: string, frame: unknown) => {
      if (!validators.has(file)) validators.set(file, ajv.compile(schema(file)));
      return validators.get(file)!(frame);
    };
    expect(check("ws-request.connect.json", cliConnect("t"))).toBe(true);
    expect(check("ws-request.agent.json", cliAgent("hi", { sessionId: "s1" }))).toBe(true);
    expect(check("ws-request.agents.list.json", cliAgentsList())).toBe(true);
    expect(check("ws-request.chat.abort.json", cliChatAbort("agent:main:main", "run_x"))).toBe(true);
    expect(check("ws-request.agent.json", JSON.parse(sampleEvent("ws-message-agent.json").body))).toBe(true);
    expect(check("ws-request.agent.json", { type: "req", id: "1", method: "agent", params: { sessionKey: "main" } })).toBe(false);
    expect(check("ws-event.agent.json", { type: "event", event: "agent", seq: 3, payload: { runId: "r", sessionKey: "main", agentId: "main", seq: 3, ts: 1, stream: "assistant", data: { text: "a", delta: "a" } } })).toBe(true);
    expect(check("ws-response.json", { type: "res", id: "1", ok: false, error: { code: "UNAUTHORIZED", message: "no" } })).toBe(true);
  });
});
