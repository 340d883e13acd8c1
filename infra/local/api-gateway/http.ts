import type { IncomingMessage, ServerResponse } from "node:http";

export type BodyOutcome = { kind: "read"; body: Buffer } | { kind: "tooLarge" } | { kind: "aborted" };

/** Reads a request body, stopping as soon as it exceeds `limitBytes`. */
export function readBody(req: IncomingMessage, limitBytes: number): Promise<BodyOutcome> {
  const declared = Number(req.headers["content-length"] ?? 0);
  if (declared > limitBytes) return Promise.resolve({ kind: "tooLarge" });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const onData = (chunk: Buffer): void => {
      total += chunk.length;
      if (total > limitBytes) {
        req.off("data", onData);
        resolve({ kind: "tooLarge" });
        return;
      }
      chunks.push(chunk);
    };
    req.on("data", onData);
    req.once("end", () => resolve({ kind: "read", body: Buffer.concat(chunks) }));
    req.once("error", () => resolve({ kind: "aborted" }));
    req.once("close", () => {
      if (!req.complete) resolve({ kind: "aborted" });
    });
  });
}

/**
 * API Gateway's own error answers: a JSON `message`, the error type in
 * `x-amzn-ErrorType` (what the AWS SDKs read to pick the exception class) and
 * a request id.
 */
export function sendGatewayError(
  res: ServerResponse,
  statusCode: number,
  message: string,
  errorType: string | undefined,
  requestId: string,
): void {
  const body = JSON.stringify({ message });
  res.writeHead(statusCode, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
    "x-amzn-RequestId": requestId,
    ...(errorType === undefined ? {} : { "x-amzn-ErrorType": errorType }),
  });
  res.end(body);
}

export interface HeaderMaps {
  headers: Record<string, string>;
  multiValueHeaders: Record<string, string[]>;
}

/**
 * Header maps as API Gateway builds them: names keep the client's casing
 * (Node lowercases `req.headers`, so this reads `rawHeaders`), repeated
 * headers collect in `multiValueHeaders` and the last one wins in `headers`.
 */
export function headerMaps(rawHeaders: string[]): HeaderMaps {
  // Null-prototype maps: a client's `constructor` or `__proto__` is a name like any other (AWS passes it through).
  const headers: Record<string, string> = Object.create(null);
  const multiValueHeaders: Record<string, string[]> = Object.create(null);
  const firstSpelling = new Map<string, string>();
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const lower = rawHeaders[i].toLowerCase();
    const name = firstSpelling.get(lower) ?? rawHeaders[i];
    firstSpelling.set(lower, name);
    headers[name] = rawHeaders[i + 1];
    (multiValueHeaders[name] ??= []).push(rawHeaders[i + 1]);
  }
  return { headers, multiValueHeaders };
}

/** Adds a header unless the client already sent one with that name in any casing. */
export function addHeaderIfAbsent(maps: HeaderMaps, name: string, value: string): void {
  const lower = name.toLowerCase();
  if (Object.keys(maps.headers).some((existing) => existing.toLowerCase() === lower)) return;
  maps.headers[name] = value;
  maps.multiValueHeaders[name] = [value];
}

export interface QueryMaps {
  queryStringParameters: Record<string, string>;
  multiValueQueryStringParameters: Record<string, string[]>;
}

/** Decoded query parameters; `undefined` when the URL has none. */
export function queryMaps(search: string): QueryMaps | undefined {
  const params = new URLSearchParams(search);
  if (params.size === 0) return undefined;
  const queryStringParameters: Record<string, string> = Object.create(null);
  const multiValueQueryStringParameters: Record<string, string[]> = Object.create(null);
  for (const [name, value] of params) {
    queryStringParameters[name] = value;
    (multiValueQueryStringParameters[name] ??= []).push(value);
  }
  return { queryStringParameters, multiValueQueryStringParameters };
}

export function sourceIpOf(req: IncomingMessage): string {
  const address = req.socket.remoteAddress ?? "127.0.0.1";
  // Dual-stack sockets report IPv4 peers as IPv4-mapped IPv6; AWS shows plain IPv4.
  return address.startsWith("::ffff:") ? address.slice("::ffff:".length) : address;
}

/** Splits `/path?query` without resolving dot segments or decoding, as a proxy must. */
export function splitTarget(target: string): { rawPath: string; search: string } {
  const queryAt = target.indexOf("?");
  if (queryAt < 0) return { rawPath: target, search: "" };
  return { rawPath: target.slice(0, queryAt), search: target.slice(queryAt + 1) };
}
