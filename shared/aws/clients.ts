import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { SQSClient } from "@aws-sdk/client-sqs";
import { SFNClient } from "@aws-sdk/client-sfn";
import { ApiGatewayManagementApiClient } from "@aws-sdk/client-apigatewaymanagementapi";
import type { RuntimeConfig } from "../config/runtime";
import { powertools } from "../observability/powertools";

export interface AwsClients {
  dynamo: DynamoDBDocumentClient;
  sqs: SQSClient;
  sfn: SFNClient;
  /** Null when no WebSocket API is configured (e.g. a REST-only test). */
  management: ApiGatewayManagementApiClient | null;
}

/** The real SDK clients, each with the endpoint from configuration. */
export function createAwsClients(config: RuntimeConfig): AwsClients {
  const base = { region: config.region, ...(config.credentials ? { credentials: config.credentials } : {}) };
  const dynamo = new DynamoDBClient({ ...base, endpoint: config.endpoints.dynamodb });
  const sqs = new SQSClient({ ...base, endpoint: config.endpoints.sqs });
  const sfn = new SFNClient({ ...base, endpoint: config.endpoints.sfn });
  const management = config.webSocketManagementEndpoint
    ? new ApiGatewayManagementApiClient({ ...base, endpoint: config.webSocketManagementEndpoint })
    : null;
  // Opt-in (benchmarks): the document client shares the base client's middleware stack.
  if (config.meter) {
    config.meter.attach(dynamo, "dynamodb");
    config.meter.attach(sqs, "sqs");
    config.meter.attach(sfn, "sfn");
    if (management) config.meter.attach(management, "apigw-management");
  }
  // X-Ray subsegments per SDK call; the client itself when tracing is off (locally, or `tracing: false`).
  const { tracer } = powertools();
  if (tracer) for (const client of [dynamo, sqs, sfn, management]) if (client) tracer.captureAWSv3Client(client);
  return {
    dynamo: DynamoDBDocumentClient.from(dynamo, { marshallOptions: { removeUndefinedValues: true } }),
    sqs,
    sfn,
    management,
  };
}
