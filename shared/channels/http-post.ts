import { lookup } from "node:dns/promises";
import { request as httpRequest, type RequestOptions } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { isBlockedAddress, isBlockedHostname } from "../agent/tools/ssrf-guard";

/**
 * One JSON POST to a platform or a reply URL. Never throws: a network
 * failure or timeout is `{ status: 0 }` (retryable). With `publicOnly`
 * (reply URLs chosen by a caller) the host must resolve to public addresses
 * only, and the connection is pinned to the address that was checked.
 */
export interface PostResult {
  status: number;
  /** Seconds, from Retry-After (Slack) when present. */
  retryAfterHeader?: string;
  body: string;
  error?: string;
  /** The guard refused the URL (`publicOnly`): nothing was sent, and a retry cannot help. */
  refused?: true;
}

export interface PostOptions {
  headers?: Record<string, string>;
  timeoutMs?: number;
  publicOnly?: boolean;
}

export async function postJson(url: string, payload: string, options: PostOptions = {}): Promise<PostResult> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return { status: 0, body: "", error: "invalid URL" };
  }
  if (options.publicOnly) {
    const refusal = await refusePrivate(target.hostname);
    if (refusal) return { status: 0, body: "", error: refusal, refused: true };
  }
  return send(target, payload, options);
}

async function refusePrivate(hostname: string): Promise<string | undefined> {
  const host = hostname.replace(/^\[|\]$/g, "");
  if (isBlockedHostname(host)) return `host ${host} is not allowed`;
  if (isIP(host)) return isBlockedAddress(host) ? `address ${host} is not public` : undefined;
  try {
    const addresses = await lookup(host, { all: true });
    return addresses.some((a) => isBlockedAddress(a.address)) ? `host ${host} resolves to a non-public address` : undefined;
  } catch (error) {
    return `cannot resolve ${host}: ${(error as Error).message}`;
  }
}

/** Resolves again at connect time and refuses anything non-public (no DNS rebinding window). */
const publicLookup: LookupFunction = (hostname, options, callback) => {
  lookup(hostname, { all: true })
    .then((addresses) => {
      const safe = addresses.find((a) => !isBlockedAddress(a.address));
      if (!safe || addresses.some((a) => isBlockedAddress(a.address))) callback(new Error(`host ${hostname} resolves to a non-public address`), "", 4);
      else if ((options as { all?: boolean }).all) (callback as unknown as (e: null, a: typeof addresses) => void)(null, [safe]);
      else callback(null, safe.address, safe.family);
    })
    .catch((error: Error) => callback(error, "", 4));
};

function send(target: URL, payload: string, options: PostOptions): Promise<PostResult> {
  const requestOptions: RequestOptions = {
    method: "POST",
    headers: { "content-type": "application/json; charset=utf-8", "content-length": String(Buffer.byteLength(payload)), ...options.headers },
    timeout: options.timeoutMs ?? 10_000,
    ...(options.publicOnly && !isIP(target.hostname.replace(/^\[|\]$/g, "")) ? { lookup: publicLookup } : {}),
  };
  const request = target.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    const req = request(target, requestOptions, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => {
        const retryAfter = res.headers["retry-after"];
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8"), ...(typeof retryAfter === "string" ? { retryAfterHeader: retryAfter } : {}) });
      });
      res.on("error", (error) => resolve({ status: 0, body: "", error: error.message }));
    });
    req.on("timeout", () => req.destroy(new Error("request timed out")));
    req.on("error", (error) => resolve({ status: 0, body: "", error: error.message }));
    req.end(payload);
  });
}
