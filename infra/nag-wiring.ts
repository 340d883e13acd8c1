import type { LambdaRestApi } from "aws-cdk-lib/aws-apigateway";
import type { WebSocketApi } from "aws-cdk-lib/aws-apigatewayv2";
import type { IFunction } from "aws-cdk-lib/aws-lambda";
import type { Construct } from "constructs";
import {
  acknowledge,
  logicalIdOf,
  manageConnectionsAcknowledgements,
  PUBLIC_REST_ACKNOWLEDGEMENT,
  RUNNER_ACKNOWLEDGEMENTS,
  taskInvokeAcknowledgement,
  WS_ROUTE_ACKNOWLEDGEMENT,
} from "./nag";
import { PUBLIC_REST_RESOURCES } from "./routes";

export interface NagTargets {
  wsApi: WebSocketApi;
  wsStage: string;
  restApi: LambdaRestApi;
  functions: Record<string, IFunction>;
}

/** Attaches every acknowledgement of infra/nag.ts to the constructs it is about. */
export function acknowledgeNagFindings(runner: Construct, targets: NagTargets): void {
  acknowledge(runner, RUNNER_ACKNOWLEDGEMENTS);
  acknowledge(runner, manageConnectionsAcknowledgements(logicalIdOf(targets.wsApi), targets.wsStage));
  acknowledge(runner, Object.values(targets.functions).map((fn) => taskInvokeAcknowledgement(logicalIdOf(fn))));
  // Every route but $connect: the connection was authorized when it opened.
  for (const child of targets.wsApi.node.children) {
    if (child.node.id !== "$connect-Route") acknowledge(child, [WS_ROUTE_ACKNOWLEDGEMENT]);
  }
  for (const resource of PUBLIC_REST_RESOURCES) {
    const method = targets.restApi.root.resourceForPath(resource.path).node.tryFindChild(resource.method);
    if (method) acknowledge(method, [PUBLIC_REST_ACKNOWLEDGEMENT]);
  }
}
