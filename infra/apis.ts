/**
 * The two front doors. Both are thin: every request goes to one Lambda that
 * validates and calls the intake core, after the authorizer function has
 * checked the caller's API key at the edge.
 */
import { Duration, type RemovalPolicy } from "aws-cdk-lib";
import {
  AccessLogFormat,
  AuthorizationType,
  EndpointType,
  IdentitySource,
  LambdaIntegration,
  LambdaRestApi,
  LogGroupLogDestination,
  MethodLoggingLevel,
  RequestAuthorizer,
  ResponseType,
} from "aws-cdk-lib/aws-apigateway";
import {
  WebSocketApi,
  WebSocketStage,
  type IWebSocketRouteAuthorizer,
  type WebSocketRouteIntegrationBindOptions,
  type WebSocketRouteIntegrationConfig,
} from "aws-cdk-lib/aws-apigatewayv2";
import { WebSocketLambdaAuthorizer } from "aws-cdk-lib/aws-apigatewayv2-authorizers";
import { WebSocketLambdaIntegration } from "aws-cdk-lib/aws-apigatewayv2-integrations";
import type { IFunction } from "aws-cdk-lib/aws-lambda";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import type { Construct } from "constructs";
import {
  PUBLIC_REST_RESOURCES,
  REST_STAGE_NAME,
  WS_ROUTE_KEYS,
  WS_ROUTE_SELECTION_EXPRESSION,
  WS_STAGE_NAME,
  wsRouteInvokesAsync,
  wsRouteReturnsResponse,
} from "./routes";
import { AUTHORIZER_CACHE_SECONDS, REST_THROTTLING, WS_THROTTLING } from "./throttling";

export { REST_THROTTLING, WS_THROTTLING } from "./throttling";

export interface RestApiProps {
  readonly handler: IFunction;
  readonly authorizer: IFunction;
  readonly removalPolicy: RemovalPolicy;
  readonly tracing: boolean;
}

/**
 * `ANY /` and `ANY /{proxy+}` behind the Lambda REQUEST authorizer (key in
 * `Authorization`, result cached AUTHORIZER_CACHE_SECONDS); the resources of
 * PUBLIC_REST_RESOURCES (health, channel webhooks, signed hooks) verify
 * their callers themselves and have no authorizer. No CORS preflight.
 */
export function createRestApi(scope: Construct, props: RestApiProps): LambdaRestApi {
  const accessLogs = new LogGroup(scope, "RestApiAccessLogs", {
    retention: RetentionDays.ONE_MONTH,
    removalPolicy: props.removalPolicy,
  });
  const authorizer = new RequestAuthorizer(scope, "RestApiAuthorizer", {
    handler: props.authorizer,
    identitySources: [IdentitySource.header("Authorization")],
    resultsCacheTtl: Duration.seconds(AUTHORIZER_CACHE_SECONDS),
  });
  const api = new LambdaRestApi(scope, "RestApi", {
    handler: props.handler,
    proxy: false,
    endpointTypes: [EndpointType.REGIONAL],
    defaultMethodOptions: { authorizer, authorizationType: AuthorizationType.CUSTOM },
    cloudWatchRole: true,
    deployOptions: {
      stageName: REST_STAGE_NAME,
      throttlingRateLimit: REST_THROTTLING.rateLimit,
      throttlingBurstLimit: REST_THROTTLING.burstLimit,
      accessLogDestination: new LogGroupLogDestination(accessLogs),
      accessLogFormat: AccessLogFormat.jsonWithStandardFields(),
      loggingLevel: MethodLoggingLevel.ERROR,
      tracingEnabled: props.tracing,
    },
  });
  addErrorResponses(api);
  api.root.addMethod("ANY");
  api.root.addProxy({ anyMethod: true });
  const publicIntegration = new LambdaIntegration(props.handler);
  for (const resource of PUBLIC_REST_RESOURCES) {
    api.root.resourceForPath(resource.path).addMethod(resource.method, publicIntegration, { authorizationType: AuthorizationType.NONE, authorizer: NO_AUTHORIZER });
  }
  // The stack exports RestApiUrl itself; drop the construct's auto-named duplicate.
  api.node.tryRemoveChild("Endpoint");
  return api;
}

/**
 * The authorizer's refusals in the API's own error shape (`{error:{code,message}}`),
 * not API Gateway's default `{message}`: clients handle one shape.
 */
export const GATEWAY_ERROR_RESPONSES = [
  { type: ResponseType.UNAUTHORIZED, statusCode: 401, code: "UNAUTHORIZED", message: "missing or invalid API key" },
  { type: ResponseType.ACCESS_DENIED, statusCode: 403, code: "FORBIDDEN", message: "this API key may not call this API" },
  { type: ResponseType.AUTHORIZER_FAILURE, statusCode: 500, code: "INTERNAL", message: "authorizer failure" },
  { type: ResponseType.THROTTLED, statusCode: 429, code: "RATE_LIMITED", message: "too many requests" },
] as const;

function addErrorResponses(api: LambdaRestApi): void {
  for (const response of GATEWAY_ERROR_RESPONSES) {
    api.addGatewayResponse(`${response.code}Response`, {
      type: response.type,
      statusCode: String(response.statusCode),
      templates: { "application/json": JSON.stringify({ error: { code: response.code, message: response.message } }) },
    });
  }
}

/** Overrides the API's default authorizer on a public method. */
const NO_AUTHORIZER = { authorizerId: "", authorizationType: AuthorizationType.NONE };

export interface WebSocketFrontDoor {
  readonly api: WebSocketApi;
  readonly stage: WebSocketStage;
}

/** Created before the functions: they need its id for the Management API endpoint. */
export function createWebSocketApi(scope: Construct, removalPolicy: RemovalPolicy): WebSocketFrontDoor {
  const api = new WebSocketApi(scope, "WebSocketApi", {
    routeSelectionExpression: WS_ROUTE_SELECTION_EXPRESSION,
  });
  const accessLogs = new LogGroup(scope, "WebSocketAccessLogs", { retention: RetentionDays.ONE_MONTH, removalPolicy });
  const stage = new WebSocketStage(scope, "WebSocketStage", {
    webSocketApi: api,
    stageName: WS_STAGE_NAME,
    autoDeploy: true,
    throttle: { rateLimit: WS_THROTTLING.rateLimit, burstLimit: WS_THROTTLING.burstLimit },
    accessLogSettings: { destination: new LogGroupLogDestination(accessLogs) as never, format: AccessLogFormat.jsonWithStandardFields() as never },
  });
  return { api, stage };
}

/**
 * Invokes the function asynchronously (`X-Amz-Invocation-Type: Event`): API
 * Gateway does not wait, so its 29 s integration limit does not cut long
 * requests (`agent.wait` defaults to 30 s) and the handler answers through
 * the Management API within its own timeout.
 */
class AsyncWebSocketLambdaIntegration extends WebSocketLambdaIntegration {
  override bind(options: WebSocketRouteIntegrationBindOptions): WebSocketRouteIntegrationConfig {
    const config = super.bind(options);
    return { ...config, requestParameters: { ...config.requestParameters, [INVOCATION_TYPE_HEADER]: "'Event'" } };
  }
}

export const INVOCATION_TYPE_HEADER = "integration.request.header.X-Amz-Invocation-Type";

/**
 * Every route goes to the one ws-api handler: `$connect`/`$disconnect`
 * synchronously (the connect result accepts or rejects the upgrade), method
 * routes asynchronously. `$connect` runs the authorizer first, with no
 * identity source: the key may come in `Authorization`, `?token=` or a
 * `bearer.<key>` subprotocol, and a socket without any is let in for an
 * in-band `connect` (API Gateway would refuse it before the authorizer if an
 * identity source were missing).
 */
export function addWebSocketRoutes(api: WebSocketApi, handler: IFunction, authorizerFn: IFunction): void {
  const sync = new WebSocketLambdaIntegration("WsApiIntegration", handler);
  const async = new AsyncWebSocketLambdaIntegration("WsApiAsyncIntegration", handler);
  const authorizer: IWebSocketRouteAuthorizer = new WebSocketLambdaAuthorizer("WsConnectAuthorizer", authorizerFn, { identitySource: [] });
  for (const routeKey of WS_ROUTE_KEYS) {
    const integration = wsRouteInvokesAsync(routeKey) ? async : sync;
    api.addRoute(routeKey, { integration, returnResponse: wsRouteReturnsResponse(routeKey), ...(routeKey === "$connect" ? { authorizer } : {}) });
  }
}
