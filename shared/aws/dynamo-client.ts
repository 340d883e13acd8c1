import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { documentClient, type DocumentClient } from "./document-client";
import type { RuntimeConfig } from "../config/runtime";
import type { MeterableClient, MeteredService } from "./metering";
import { powertools } from "../observability/powertools";

/*
 * The one client every function builds at its cold start. Apart from
 * ./clients.ts (the lazily built rest) so that a function needing only the
 * table (the authorizer) bundles no other client's code, not even as a lazy chunk.
 */

/**
 * What every client gets. `cacheMiddleware`: the SDK resolves a client's
 * middleware stack once per operation instead of on every call (about half
 * an SDK call's CPU: document-client.ts); the meter and the tracer add theirs
 * when the client is built (observe), before its first call.
 */
export function baseOf(config: RuntimeConfig): { region: string; cacheMiddleware: true; credentials?: RuntimeConfig["credentials"] } {
  return { region: config.region, cacheMiddleware: true, ...(config.credentials ? { credentials: config.credentials } : {}) };
}

/** DynamoDB only: every function reads the table, the authorizer nothing else. */
export function createDynamoDocumentClient(config: RuntimeConfig): DocumentClient {
  const dynamo = observe(config, new DynamoDBClient({ ...baseOf(config), endpoint: config.endpoints.dynamodb }), "dynamodb");
  return documentClient(dynamo, { removeUndefinedValues: true });
}

/**
 * Opt-in metering (benchmarks; the document client shares the base client's
 * middleware stack), and X-Ray subsegments per SDK call when tracing is on
 * (not locally, nor with the construct's `tracing: false`).
 */
export function observe<T extends MeterableClient>(config: RuntimeConfig, client: T, service: MeteredService): T {
  config.meter?.attach(client, service);
  powertools().tracer?.captureAWSv3Client(client);
  return client;
}

