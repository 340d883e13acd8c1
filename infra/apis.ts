/**
 * The two front doors. Both are thin: every request goes to one Lambda that
 * validates, authenticates and calls the intake core.
 */
import type { RemovalPolicy } from "aws-cdk-lib";
import {
  AccessLogFormat,
  EndpointType,
  LambdaRestApi,
  LogGroupLogDestination,
} from "aws-cdk-lib/aws-apigateway";
import { WebSocketApi, WebSocketStage, type WebSocketRouteIntegrationBindOptions, type WebSocketRouteIntegrationConfig } from "aws-cdk-lib/aws-apigatewayv2";
import { WebSocketLambdaIntegration } from "aws-cdk-lib/aws-apigatewayv2-integrations";
import type { IFunction } from "aws-cdk-lib/aws-lambda";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import type { Construct } from "constructs";
import {
  REST_STAGE_NAME,
  WS_ROUTE_KEYS,
  WS_ROUTE_SELECTION_EXPRESSION,
  WS_STAGE_NAME,
  wsRouteInvokesAsync,
  wsRouteReturnsResponse,
} from "./routes";

/** Stage-wide defaults; webhooks and clients are expected well below these. */
export const REST_THROTTLING = { rateLimit: 50, burstLimit: 100 } as const;

export function createRestApi(scope: Construct, handler: IFunction, removalPolicy: RemovalPolicy): LambdaRestApi {
  const accessLogs = new LogGroup(scope, "RestApiAccessLogs", {
    retention: RetentionDays.ONE_MONTH,
    removalPolicy,
  });
  // proxy: true creates exactly `ANY /` and `ANY /{proxy+}`; no CORS preflight.
  const api = new LambdaRestApi(scope, "RestApi", {
    handler,
    proxy: true,
    endpointTypes: [EndpointType.REGIONAL],
    deployOptions: {
      stageName: REST_STAGE_NAME,
      throttlingRateLimit: REST_THROTTLING.rateLimit,
      throttlingBurstLimit: REST_THROTTLING.burstLimit,
      accessLogDestination: new LogGroupLogDestination(accessLogs),
      accessLogFormat: AccessLogFormat.jsonWithStandardFields(),
    },
  });
  // The stack exports RestApiUrl itself; drop the construct's auto-named duplicate.
  api.node.tryRemoveChild("Endpoint");
  return api;
}

export interface WebSocketFrontDoor {
  readonly api: WebSocketApi;
  readonly stage: WebSocketStage;
}

/** Created before the functions: they need its id for the Management API endpoint. */
export function createWebSocketApi(scope: Construct): WebSocketFrontDoor {
  const api = new WebSocketApi(scope, "WebSocketApi", {
    routeSelectionExpression: WS_ROUTE_SELECTION_EXPRESSION,
  });
  const stage = new WebSocketStage(scope, "WebSocketStage", {
    webSocketApi: api,
    stageName: WS_STAGE_NAME,
    autoDeploy: true,
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
 * routes asynchronously.
 */
export function addWebSocketRoutes(api: WebSocketApi, handler: IFunction): void {
  const sync = new WebSocketLambdaIntegration("WsApiIntegration", handler);
  const async = new AsyncWebSocketLambdaIntegration("WsApiAsyncIntegration", handler);
  for (const routeKey of WS_ROUTE_KEYS) {
    const integration = wsRouteInvokesAsync(routeKey) ? async : sync;
    api.addRoute(routeKey, { integration, returnResponse: wsRouteReturnsResponse(routeKey) });
  }
}
