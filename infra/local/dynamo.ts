import type { AddressInfo } from "node:net";
import { EventEmitter } from "node:events";
import type { Server } from "node:http";
import type { LocalServiceHandler } from "./aws-edge";
import { mkdirSync } from "node:fs";
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceInUseException,
} from "@aws-sdk/client-dynamodb";
// dynalite ships no types; its factory returns a node http.Server.
// @ts-expect-error untyped module
import dynalite from "dynalite";
// Closes the iterators dynalite opens (it never does by itself): see the file.
import "./dynalite-iterators";

export interface LocalDynamo {
  endpoint: string;
  /**
   * The same emulator without the loopback hop: the edge hands it each
   * DynamoDB call in-process (one HTTP round trip per call less on the main
   * thread, which runs every emulator). Same wire bytes in and out.
   */
  handler: LocalServiceHandler;
  close(): Promise<void>;
}

/**
 * DynamoDB on loopback: dynalite in-process, in memory (tests) or on disk
 * under `dataDir` (`npm start`, so sessions survive a restart).
 */
export async function startLocalDynamo(options: { host?: string; port?: number; dataDir?: string } = {}): Promise<LocalDynamo> {
  if (options.dataDir) mkdirSync(options.dataDir, { recursive: true });
  const server = (dynalite as (opts: object) => Server)({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0, ...(options.dataDir ? { path: options.dataDir } : {}) });
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://${host}:${port}`,
    handler: inProcess(server.listeners("request")[0] as DynaliteListener),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** dynalite's request listener: it reads `data`/`end` from the request and answers with setHeader / statusCode / end. */
type DynaliteListener = (req: EventEmitter, res: DynaliteResponse) => void;

interface DynaliteResponse {
  statusCode: number;
  /** dynalite stores the request's content type here and sends it back. */
  contentType?: string;
  setHeader(name: string, value: string | number): void;
  end(body?: string): void;
}

/** Drives dynalite's listener with a request object that carries exactly what the edge read off the wire. */
function inProcess(listener: DynaliteListener): LocalServiceHandler {
  return (request) =>
    new Promise((resolve) => {
      const headers: Record<string, string> = {};
      const res: DynaliteResponse = {
        statusCode: 200,
        setHeader: (name, value) => void (headers[name.toLowerCase()] = String(value)),
        end: (body = "") => resolve({ statusCode: res.statusCode, headers, body }),
      };
      const req = Object.assign(new EventEmitter(), { method: request.method, url: request.path, headers: request.headers });
      listener(req, res);
      // The listener attached its handlers synchronously.
      if (request.body.length > 0) req.emit("data", request.body);
      req.emit("end");
    });
}

/**
 * The same single-table schema the CDK stack declares (pk/sk strings,
 * on-demand). Idempotent: an existing table is left as it is.
 */
export async function ensureTable(client: DynamoDBClient, tableName: string): Promise<void> {
  try {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        AttributeDefinitions: [
          { AttributeName: "pk", AttributeType: "S" },
          { AttributeName: "sk", AttributeType: "S" },
        ],
        KeySchema: [
          { AttributeName: "pk", KeyType: "HASH" },
          { AttributeName: "sk", KeyType: "RANGE" },
        ],
        BillingMode: "PAY_PER_REQUEST",
      }),
    );
  } catch (error) {
    if (!(error instanceof ResourceInUseException) && (error as { name?: string }).name !== "ResourceInUseException") throw error;
  }
  for (let i = 0; i < 100; i += 1) {
    const out = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (out.Table?.TableStatus === "ACTIVE") return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`table ${tableName} did not become ACTIVE`);
}
