/**
 * What the template says about the front doors' methods and authorizers,
 * for the local API Gateway: every REST method (its resource path from the
 * `AWS::ApiGateway::Resource` tree, its `CUSTOM` authorizer) and the
 * WebSocket `$connect` route's authorizer. Each authorizer invokes its
 * function the way the other triggers do (in the function's sandbox).
 */
import type { CfnResource } from "../../synth";
import { LocalAuthorizer, type LocalRestRoute } from "../api-gateway";
import type { DeployedFunction } from "./deploy";


type Entry = [string, CfnResource];
type Invoke = (fn: DeployedFunction) => <R>(event: unknown) => Promise<R>;

export interface EdgeAuthorization {
  restRoutes: LocalRestRoute[];
  /** The function every REST method integrates (locally they must all be the same). */
  restFunctionUri: unknown;
  connectAuthorizer?: LocalAuthorizer;
  gatewayResponses: Record<string, { statusCode: number; body: string }>;
}

export function readEdgeAuthorization(entries: Entry[], invoke: Invoke, functionOf: (uri: unknown) => DeployedFunction): EdgeAuthorization {
  const byId = new Map(entries);
  const authorizers = new Map<string, LocalAuthorizer>();
  const authorizerOf = (logicalId: string): LocalAuthorizer => {
    const existing = authorizers.get(logicalId);
    if (existing) return existing;
    const created = buildAuthorizer(byId.get(logicalId)!, invoke, functionOf);
    authorizers.set(logicalId, created);
    return created;
  };
  const methods = entries.filter(([, r]) => r.Type === "AWS::ApiGateway::Method" && (r.Properties?.Integration as { Type?: string })?.Type === "AWS_PROXY");
  if (methods.length === 0) throw new Error("the template has no REST proxy method (AWS::ApiGateway::Method with an AWS_PROXY integration)");
  const restRoutes = methods.map(([, method]) => {
    const props = method.Properties!;
    const authorizerId = props.AuthorizationType === "CUSTOM" ? refOf(props.AuthorizerId) : undefined;
    return {
      resourcePath: resourcePathOf(props.ResourceId, byId),
      httpMethod: String(props.HttpMethod),
      ...(authorizerId ? { authorizer: authorizerOf(authorizerId) } : {}),
    };
  });
  const connect = entries.find(([, r]) => r.Type === "AWS::ApiGatewayV2::Route" && r.Properties?.RouteKey === "$connect" && r.Properties?.AuthorizationType === "CUSTOM");
  const connectAuthorizerId = connect ? refOf(connect[1].Properties?.AuthorizerId) : undefined;

  return {
    gatewayResponses: gatewayResponsesOf(entries),
    restRoutes,
    restFunctionUri: (methods[0][1].Properties!.Integration as { Uri: unknown }).Uri,
    ...(connectAuthorizerId ? { connectAuthorizer: authorizerOf(connectAuthorizerId) } : {}),
  };
}

function buildAuthorizer(resource: CfnResource, invoke: Invoke, functionOf: (uri: unknown) => DeployedFunction): LocalAuthorizer {
  const props = resource.Properties ?? {};
  if (props.AuthorizerType !== "REQUEST" && props.Type !== "REQUEST") throw new Error(`only REQUEST authorizers run locally (got ${String(props.AuthorizerType ?? props.Type)})`);
  const fn = functionOf(props.AuthorizerUri);
  const sources = props.IdentitySource;
  const identitySources = Array.isArray(sources) ? sources.map(String) : typeof sources === "string" ? sources.split(",").map((s) => s.trim()).filter(Boolean) : [];
  // REST authorizers cache 300 s unless told otherwise; WebSocket ones do not cache.
  const ttlSeconds = resource.Type === "AWS::ApiGateway::Authorizer" ? Number(props.AuthorizerResultTtlInSeconds ?? 300) : 0;
  return new LocalAuthorizer({ invoke: (event) => invoke(fn)(event), identitySources, ttlSeconds });
}

function refOf(value: unknown): string | undefined {
  const ref = (value as { Ref?: unknown } | undefined)?.Ref;
  return typeof ref === "string" ? ref : undefined;
}

/** `Fn::GetAtt [Api, RootResourceId]` is `/`; a `Ref` to a Resource is its parent's path plus its PathPart. */
function resourcePathOf(resourceId: unknown, byId: Map<string, CfnResource>): string {
  const ref = refOf(resourceId);
  if (!ref) return "/";
  const resource = byId.get(ref);
  if (!resource || resource.Type !== "AWS::ApiGateway::Resource") throw new Error(`REST method on unknown resource ${ref}`);
  const parent = resourcePathOf(resource.Properties?.ParentId, byId);
  return `${parent === "/" ? "" : parent}/${String(resource.Properties?.PathPart)}`;
}



/** AWS::ApiGateway::GatewayResponse: the JSON template is static text here (no `$context` variables). */
function gatewayResponsesOf(entries: Entry[]): Record<string, { statusCode: number; body: string }> {
  const responses: Record<string, { statusCode: number; body: string }> = {};
  for (const [, resource] of entries.filter(([, r]) => r.Type === "AWS::ApiGateway::GatewayResponse")) {
    const props = resource.Properties ?? {};
    const templates = (props.ResponseTemplates ?? {}) as Record<string, string>;
    responses[String(props.ResponseType)] = { statusCode: Number(props.StatusCode ?? 500), body: templates["application/json"] ?? "" };
  }
  return responses;
}
