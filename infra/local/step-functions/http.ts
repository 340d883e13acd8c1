/**
 * The AWS JSON 1.0 protocol over loopback HTTP, enough for the real
 * `@aws-sdk/client-sfn`: `POST /`, `x-amz-target: AWSStepFunctions.<Op>`,
 * `content-type: application/x-amz-json-1.0`. Errors are HTTP 400 with
 * `{"__type": "<Code>", "message"}` (and `x-amzn-errortype`), from which the
 * SDK raises its modeled exception of that name.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { LocalLogger } from "../lambda-context";
import type { JsonObject, Operation } from "./api";
import { SfnApiError } from "./errors";

const TARGET_PREFIX = "AWSStepFunctions.";
const CONTENT_TYPE = "application/x-amz-json-1.0";
// An execution input is at most 256 KiB, but JSON escaping can inflate it
// several times inside the request body.
const MAX_BODY_BYTES = 4 * 1024 * 1024;

export interface JsonProtocolServer {
  endpoint: string;
  close(): Promise<void>;
}

export interface JsonProtocolServerOptions {
  host: string;
  port: number;
  operations: Record<string, Operation>;
  logger?: LocalLogger;
}

export async function startJsonProtocolServer(options: JsonProtocolServerOptions): Promise<JsonProtocolServer> {
  const server = createServer((request, response) => {
    void handle(request, response, options);
  });
  await listen(server, options.host, options.port);
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://${formatHost(options.host)}:${port}`,
    close: () => closeServer(server),
  };
}

async function handle(request: IncomingMessage, response: ServerResponse, options: JsonProtocolServerOptions) {
  try {
    // Read the body first: answering before it is consumed upsets keep-alive.
    const body = await readJsonBody(request);
    const operation = resolveOperation(request, options.operations);
    send(response, 200, operation(body));
  } catch (error) {
    if (error instanceof SfnApiError) {
      sendError(response, 400, error.code, error.message);
      return;
    }
    options.logger?.error("local step functions: request failed", { error: String(error) });
    sendError(response, 500, "InternalFailure", "The request processing has failed because of an unknown error.");
  }
}

function resolveOperation(request: IncomingMessage, operations: Record<string, Operation>): Operation {
  const target = request.headers["x-amz-target"];
  const name = typeof target === "string" && target.startsWith(TARGET_PREFIX) ? target.slice(TARGET_PREFIX.length) : "";
  const operation = request.method === "POST" ? operations[name] : undefined;
  if (!operation) throw new SfnApiError("UnknownOperationException", `Unknown operation: '${String(target)}'`);
  return operation;
}

async function readJsonBody(request: IncomingMessage): Promise<JsonObject> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new SfnApiError("ValidationException", "Request body is too large");
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (text.trim() === "") return {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) return parsed as JsonObject;
  } catch {
    // fall through: answered as a serialization error below
  }
  throw new SfnApiError("SerializationException", "Request body is not a JSON object");
}

function send(response: ServerResponse, status: number, body: JsonObject, errorType?: string): void {
  const payload = JSON.stringify(body);
  response.writeHead(status, {
    "content-type": CONTENT_TYPE,
    "content-length": Buffer.byteLength(payload),
    "x-amzn-requestid": randomUUID(),
    ...(errorType ? { "x-amzn-errortype": errorType } : {}),
  });
  response.end(payload);
}

function sendError(response: ServerResponse, status: number, code: string, message: string): void {
  send(response, status, { __type: code, message }, code);
}

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    // SDK clients keep connections alive; without this, close waits for them.
    server.closeAllConnections();
  });
}

function formatHost(host: string): string {
  if (host === "0.0.0.0" || host === "::") return "127.0.0.1";
  return host.includes(":") ? `[${host}]` : host;
}
