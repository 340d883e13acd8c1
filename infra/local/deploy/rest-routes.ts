/**
 * The REST API's resources and methods from the template, as the local
 * front door routes them: each AWS_PROXY method with its resource path, its
 * function, whether it streams (`ResponseTransferMode: STREAM`, the
 * `response-streaming-invocations` URI) and its TimeoutInMillis.
 */
import type { CfnResource } from "../../synth";
import type { LocalRestRoute } from "../api-gateway/rest-routes";
import type { QueueSignals } from "../lambda/pool";
import type { DeployedFunction, DeployedResources } from "./deploy";
import { resolveValue } from "./intrinsics";

type Entry = [string, CfnResource];

interface Integration {
  Type?: string;
  Uri?: unknown;
  ResponseTransferMode?: string;
  TimeoutInMillis?: number;
}

export interface TemplateRestRoute {
  httpMethod: string;
  resourcePath: string;
  fn: DeployedFunction;
  streaming: boolean;
  timeoutMs?: number;
}

export function restRoutesOf(entries: Entry[], deployed: DeployedResources): TemplateRestRoute[] {
  const resources = new Map(entries.filter(([, r]) => r.Type === "AWS::ApiGateway::Resource"));
  const pathOf = (ref: unknown): string => {
    const id = refId(ref);
    const resource = id ? resources.get(id) : undefined;
    if (!resource) return ""; // the root (Fn::GetAtt RootResourceId)
    return `${pathOf(resource.Properties?.ParentId)}/${String(resource.Properties?.PathPart)}`;
  };
  return entries
    .filter(([, r]) => r.Type === "AWS::ApiGateway::Method" && (r.Properties?.Integration as Integration | undefined)?.Type === "AWS_PROXY")
    .map(([, method]) => {
      const integration = method.Properties!.Integration as Integration;
      const uri = String(resolveValue(integration.Uri, deployed.scope));
      return {
        httpMethod: String(method.Properties?.HttpMethod ?? "ANY"),
        resourcePath: pathOf(method.Properties?.ResourceId) || "/",
        fn: functionOfUri(uri, deployed),
        streaming: integration.ResponseTransferMode === "STREAM" || uri.includes("/response-streaming-invocations"),
        ...(typeof integration.TimeoutInMillis === "number" ? { timeoutMs: integration.TimeoutInMillis } : {}),
      };
    });
}

function refId(value: unknown): string | undefined {
  return value && typeof value === "object" && "Ref" in value ? String((value as { Ref: unknown }).Ref) : undefined;
}

function functionOfUri(uri: string, deployed: DeployedResources): DeployedFunction {
  const match = /functions\/(arn:aws:lambda:[^/]+)\/(?:invocations|response-streaming-invocations)/.exec(uri);
  const fn = match ? [...deployed.functions.values()].find((candidate) => candidate.arn === match[1]) : undefined;
  if (!fn) throw new Error(`integration ${uri} does not invoke a function of this stack`);
  return fn;
}

/** Invokes a deployed function's pool; `signals` (the local gateway's timer) hear when the call waits for a sandbox. */
export type Invoker = (fn: DeployedFunction) => <R>(event: unknown, signals?: QueueSignals) => Promise<R>;
export type StreamInvoker = (fn: DeployedFunction) => (event: unknown, onChunk: (chunk: Buffer) => void, signals?: QueueSignals) => Promise<void>;
/** Wraps one invocation of `fn`; `event` is what it is invoked with (an object, or the Invoke API's JSON text). */
export type AroundInvoke = <R>(fn: DeployedFunction, invoke: () => Promise<R>, event?: unknown) => Promise<R>;

/** The pools' buffered and streamed invocations, each through `around` (the fault and observation wrappers). */
export function poolInvokers(around?: AroundInvoke): { invoke: Invoker; invokeStream: StreamInvoker } {
  const wrap = <R>(fn: DeployedFunction, run: () => Promise<R>, event: unknown) => (around ? around(fn, run, event) : run());
  return {
    invoke: (fn) => (event, signals) => wrap(fn, () => fn.pool.invoke(event, signals), event),
    invokeStream: (fn) => (event, onChunk, signals) => wrap(fn, () => fn.pool.invokeStream(event, onChunk, signals), event),
  };
}

export function toLocalRoutes(routes: TemplateRestRoute[], invoke: Invoker, invokeStream: StreamInvoker): LocalRestRoute[] {
  return routes.map((route) => ({
    httpMethod: route.httpMethod,
    resourcePath: route.resourcePath,
    ...(route.timeoutMs !== undefined ? { timeoutMs: route.timeoutMs } : {}),
    ...(route.streaming
      ? { streamHandler: (event, _context, onChunk, progress) => invokeStream(route.fn)(event, onChunk, progress) }
      : { handler: (event, _context, progress) => invoke(route.fn)(event, progress) }),
  }));
}
