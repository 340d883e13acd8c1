import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { SQSClient } from "@aws-sdk/client-sqs";
import { SFNClient } from "@aws-sdk/client-sfn";
import { ApiGatewayManagementApiClient } from "@aws-sdk/client-apigatewaymanagementapi";
import type { RuntimeConfig } from "../config/runtime";

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
  return {
    dynamo: DynamoDBDocumentClient.from(dynamo, { marshallOptions: { removeUndefinedValues: true } }),
    sqs: new SQSClient({ ...base, endpoint: config.endpoints.sqs }),
    sfn: new SFNClient({ ...base, endpoint: config.endpoints.sfn }),
    management: config.webSocketManagementEndpoint
      ? new ApiGatewayManagementApiClient({ ...base, endpoint: config.webSocketManagementEndpoint })
      : null,
  };
}
