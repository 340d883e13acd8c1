import type { DocumentClient } from "./document-client";
import type { SQSClient } from "@aws-sdk/client-sqs";
import type { SFNClient } from "@aws-sdk/client-sfn";
import type { ApiGatewayManagementApiClient } from "@aws-sdk/client-apigatewaymanagementapi";
import type { RuntimeConfig } from "../config/runtime";
import { baseOf, createDynamoDocumentClient, observe } from "./dynamo-client";

/**
 * A client built on its first use. Its SDK package is imported dynamically,
 * so in a bundle (infra/bundle.ts splits code) it sits in a chunk that the
 * function's import neither parses nor evaluates: the authorizer and the
 * dispatcher never load SQS or the WebSocket management client, and no
 * function pays for one at import (issue 15, bundle import times).
 */
export type LazyClient<T> = () => Promise<T>;

export interface AwsClients {
  dynamo: DocumentClient;
  sqs: LazyClient<SQSClient>;
  sfn: LazyClient<SFNClient>;
  /** Null when no WebSocket API is configured (e.g. a REST-only test). */
  management: LazyClient<ApiGatewayManagementApiClient> | null;
}

/** The real SDK clients, each with the endpoint from configuration; all but DynamoDB built on first use. */
export function createAwsClients(config: RuntimeConfig): AwsClients {
  const base = baseOf(config);
  const management = config.webSocketManagementEndpoint;
  return {
    dynamo: createDynamoDocumentClient(config),
    sqs: lazy(async () => observe(config, new (await import("@aws-sdk/client-sqs")).SQSClient({ ...base, endpoint: config.endpoints.sqs }), "sqs")),
    sfn: lazy(async () => observe(config, new (await import("@aws-sdk/client-sfn")).SFNClient({ ...base, endpoint: config.endpoints.sfn }), "sfn")),
    management: management
      ? lazy(async () =>
          observe(config, new (await import("@aws-sdk/client-apigatewaymanagementapi")).ApiGatewayManagementApiClient({ ...base, endpoint: management }), "apigw-management"),
        )
      : null,
  };
}

/** Built once; a failed build (the chunk could not load) is not kept, so the next call tries again. */
function lazy<T>(build: () => Promise<T>): LazyClient<T> {
  let client: Promise<T> | undefined;
  return () =>
    (client ??= build().catch((error: unknown) => {
      client = undefined;
      throw error;
    }));
}
