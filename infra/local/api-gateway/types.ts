import type { StaticSite } from "./static-site";
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from "aws-lambda";
import type { LocalAuthorizer } from "./authorizer";
import type { InvocationProgress } from "./invoke";

/** `progress` lets a local integration say when it waits for a sandbox, which the integration timeout does not count. */
export type RestHandler = (event: APIGatewayProxyEvent, context: Context, progress?: InvocationProgress) => Promise<APIGatewayProxyResult>;

/** A response-streaming integration: the function's stream bytes (prelude, 8 NUL bytes, body) as written. */
export type RestStreamHandler = (event: APIGatewayProxyEvent, context: Context, onChunk: (chunk: Buffer) => void, progress?: InvocationProgress) => Promise<void>;

/**
 * The event API Gateway sends to a Lambda proxy integration of a WebSocket
 * API. One shape for the three kinds, because consumers route on
 * `requestContext.routeKey` and TypeScript cannot narrow a union on a nested
 * discriminant anyway. Which fields are present, as in AWS:
 * - CONNECT: headers, multiValueHeaders, query strings (only when the URL has any)
 * - MESSAGE: body, messageId
 * - DISCONNECT: headers (the small fixed set AWS sends), disconnectStatusCode, disconnectReason
 */
export interface WebSocketEvent {
  requestContext: WebSocketRequestContext;
  headers?: Record<string, string>;
  multiValueHeaders?: Record<string, string[]>;
  queryStringParameters?: Record<string, string>;
  multiValueQueryStringParameters?: Record<string, string[]>;
  body?: string;
  isBase64Encoded: boolean;
}

export interface WebSocketRequestContext {
  routeKey: string;
  eventType: "CONNECT" | "MESSAGE" | "DISCONNECT";
  /** Only MESSAGE events carry one; the key is present but undefined otherwise. */
  messageId: string | undefined;
  connectionId: string;
  connectedAt: number;
  domainName: string;
  stage: string;
  apiId: string;
  requestId: string;
  extendedRequestId: string;
  requestTime: string;
  requestTimeEpoch: number;
  messageDirection: "IN";
  identity: { sourceIp: string; userAgent?: string };
  /** The $connect authorizer's context (and principalId), on every event of the connection. */
  authorizer?: Record<string, unknown>;
  disconnectStatusCode?: number;
  disconnectReason?: string;
}

/**
 * What a WebSocket route integration may return. `headers` matters only on
 * `$connect` (e.g. `Sec-WebSocket-Protocol`, which AWS echoes to the client
 * only when the integration returns it). Bodies are not sent back to the
 * client: routes have no route response, as with CDK's default
 * (`returnResponse: false`).
 */
export interface WebSocketHandlerResult {
  statusCode: number;
  body?: string;
  headers?: Record<string, string>;
}

export type WebSocketHandler = (event: WebSocketEvent, context: Context, progress?: InvocationProgress) => Promise<WebSocketHandlerResult | void>;

export interface LocalApiGatewayLimits {
  /** Whole WebSocket message, inbound and via PostToConnection. AWS: 128 KB. */
  messageBytes?: number;
  /** Single inbound WebSocket frame. AWS: 32 KB. */
  frameBytes?: number;
  /** Closes a connection without inbound messages for this long. AWS: 10 min. */
  idleTimeoutMs?: number;
  /** Closes any connection after this long. AWS: 2 h. */
  maxConnectionMs?: number;
  /** REST and WebSocket integrations. AWS: 29 s. */
  integrationTimeoutMs?: number;
}

/** One REST method of the template: its resource path (`/`, `/{proxy+}`, `/health`, `/v1/hooks/{proxy+}`) and authorizer. */
export type { LocalRestRoute } from "./rest-routes";
import type { LocalRestRoute } from "./rest-routes";

export interface LocalApiGatewayOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** 0 picks any free port. */
  port: number;
  stage: string;
  restHandler: RestHandler;
  /**
   * The REST API's resources and methods from the template, each with its
   * integration and authorizer. Default: CDK's `LambdaRestApi` proxy (`ANY /`
   * and `ANY /{proxy+}` to `restHandler`, no authorizer).
   */
  restRoutes?: LocalRestRoute[];
  /** Static folders served beside the APIs (the web console at `/console`). */
  staticSites?: readonly StaticSite[];
  webSocketHandler: WebSocketHandler;
  /** AWS::ApiGateway::GatewayResponse bodies by ResponseType (UNAUTHORIZED, ACCESS_DENIED, ...); default: API Gateway's `{message}`. */
  gatewayResponses?: Record<string, { statusCode: number; body: string }>;
  /** The `$connect` route's authorizer: its context reaches every event of the connection. */
  connectAuthorizer?: LocalAuthorizer;
  /** Route keys known to the WebSocket API besides $connect/$disconnect/$default; the route selection expression is `$request.body.method`. */
  webSocketRoutes: string[];
  limits?: LocalApiGatewayLimits;
  createContext?: (functionName: string, timeoutMs: number) => Context;
  /**
   * Message routes invoked asynchronously (integration request header
   * `X-Amz-Invocation-Type: 'Event'`, as the CDK stack configures): API Gateway
   * does not wait, so there is no 29 s integration timeout and no error message
   * to the client; the function answers through the Management API within its
   * own timeout, given here. A failed invocation is retried as Lambda retries
   * an async event (api-gateway/async-invoke.ts), with the function's
   * EventInvokeConfig.
   */
  webSocketAsyncInvocation?: WebSocketAsyncInvocation;
}

export interface WebSocketAsyncInvocation {
  functionTimeoutMs: number;
  /** EventInvokeConfig MaximumRetryAttempts (Lambda's default 2). */
  maxRetryAttempts?: number;
  /** Between retries (AWS: about 1 then 2 minutes; default 1 s). */
  retryDelayMs?: number;
  /** Retries exhausted: the event, the last failure, how many times it ran (Lambda sends its record to the OnFailure destination). */
  onRetriesExhausted?(event: WebSocketEvent, error: unknown, attempts: number): void;
}

export interface LocalApiGateway {
  /** No stage prefix locally: `${restUrl}/v1/agent`. */
  restUrl: string;
  /** `ws://host:port/ws`. */
  webSocketUrl: string;
  /** `http://host:port/{stage}`; give it to ApiGatewayManagementApiClient as `endpoint`. */
  managementEndpoint: string;
  close(): Promise<void>;
  connectionCount(): number;
  /** Settles when no asynchronous WebSocket invocation is running or waiting for its retry. */
  asyncIdle(): Promise<void>;
}

export const DEFAULT_LIMITS: Required<LocalApiGatewayLimits> = {
  messageBytes: 128 * 1024,
  frameBytes: 32 * 1024,
  idleTimeoutMs: 10 * 60 * 1000,
  maxConnectionMs: 2 * 60 * 60 * 1000,
  integrationTimeoutMs: 29_000,
};

/** API Gateway rejects REST request payloads over 10 MB. */
export const REST_PAYLOAD_BYTES = 10 * 1024 * 1024;

/** Everything the REST, WebSocket and management parts share about one gateway. */
export interface GatewaySettings {
  stage: string;
  apiId: string;
  webSocketPath: string;
  limits: Required<LocalApiGatewayLimits>;
  createContext: (functionName: string, timeoutMs: number) => Context;
  webSocketAsyncInvocation?: WebSocketAsyncInvocation;
  restRoutes: LocalRestRoute[];
  gatewayResponses: Record<string, { statusCode: number; body: string }>;
  connectAuthorizer?: LocalAuthorizer;
  region: string;
  accountId: string;
}
