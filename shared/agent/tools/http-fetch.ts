import { lookup } from "node:dns/promises";
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP } from "node:net";
import { htmlToText } from "./html-text";
import { isBlockedAddress, isBlockedHostname } from "./ssrf-guard";
import { ToolInputError, type ToolDefinition } from "./types";

/**
 * http_fetch: GET a public URL and return its text. Limits: response bytes,
 * total time, redirects. Every hop is resolved, checked by the SSRF guard and
 * connected to the checked address only.
 */
export { htmlToText };

export interface HttpFetchLimits {
  maxBytes: number;
  timeoutMs: number;
  maxRedirects: number;
}

/** Decides whether an address may be contacted; the default refuses every non-public one. */
export type AddressPolicy = (address: string) => boolean;
export const publicAddressesOnly: AddressPolicy = (address) => !isBlockedAddress(address);

export interface FetchedPage {
  url: string;
  status: number;
  statusText: string;
  contentType: string;
  body: string;
  /** The body was cut at `maxBytes`. */
  truncated: boolean;
}

export class FetchRefusedError extends ToolInputError {
  override readonly name: string = "FetchRefusedError";
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const TEXTUAL = /^(text\/|application\/(json|xml|xhtml\+xml|javascript|ld\+json|rss\+xml|atom\+xml))|\+json|\+xml/i;

export function createHttpFetchTool(limits: HttpFetchLimits, policy: AddressPolicy = publicAddressesOnly): ToolDefinition {
  return {
    name: "http_fetch",
    description: "Fetch a public http(s) URL with GET and return its status and text content (HTML is reduced to text).",
    parameters: {
      type: "object",
      properties: { url: { type: "string", description: "Absolute http:// or https:// URL" } },
      required: ["url"],
      additionalProperties: false,
    },
    mutating: false,
    timeoutMs: limits.timeoutMs + 1000,
    async execute(args, context) {
      const page = await guardedFetch(String(args.url), limits, policy, context.signal);
      const text = /html/i.test(page.contentType) ? htmlToText(page.body) : page.body;
      const notice = page.truncated ? `\n\n[response cut at ${limits.maxBytes} bytes]` : "";
      return {
        content: `HTTP ${page.status} ${page.statusText}\nURL: ${page.url}\nContent-Type: ${page.contentType}\n\n${text}${notice}`,
        isError: page.status >= 400,
      };
    },
  };
}

export async function guardedFetch(rawUrl: string, limits: HttpFetchLimits, policy: AddressPolicy, signal: AbortSignal): Promise<FetchedPage> {
  const deadline = AbortSignal.timeout(limits.timeoutMs);
  const combined = AbortSignal.any([signal, deadline]);
  let url = parseUrl(rawUrl);
  for (let hop = 0; ; hop += 1) {
    const address = await resolveChecked(url, policy);
    const response = await get(url, address, combined);
    const location = response.headers.location;
    if (REDIRECTS.has(response.statusCode ?? 0) && location) {
      response.destroy();
      if (hop >= limits.maxRedirects) throw new FetchRefusedError(`too many redirects (limit ${limits.maxRedirects})`);
      url = parseUrl(new URL(location, url).toString());
      continue;
    }
    return readPage(url, response, limits.maxBytes, combined);
  }
}

function parseUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ToolInputError(`not a valid URL: ${raw}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new FetchRefusedError(`only http and https URLs are allowed, not ${url.protocol}`);
  if (url.username || url.password) throw new FetchRefusedError("URLs with credentials are not allowed");
  return url;
}

async function resolveChecked(url: URL, policy: AddressPolicy): Promise<{ address: string; family: number }> {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (isBlockedHostname(host)) throw new FetchRefusedError(`refused: ${host} is a local address`);
  const addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await lookup(host, { all: true, verbatim: true });
  if (addresses.length === 0) throw new FetchRefusedError(`${host} did not resolve`);
  const refused = addresses.find((entry) => !policy(entry.address));
  if (refused) throw new FetchRefusedError(`refused: ${host} resolves to ${refused.address}, a private, loopback or link-local address`);
  return addresses[0];
}

function get(url: URL, pinned: { address: string; family: number }, signal: AbortSignal): Promise<IncomingMessage> {
  const send = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(url, {
      method: "GET",
      signal,
      headers: { "user-agent": "agent-runner-http-fetch/1", accept: "text/html,application/json,text/plain;q=0.9,*/*;q=0.5" },
      // Connect to the address we checked, whatever DNS would answer now.
      lookup: (_hostname, options, callback) => {
        if ((options as { all?: boolean }).all) (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [pinned]);
        else callback(null, pinned.address, pinned.family);
      },
    });
    req.once("response", resolve);
    req.once("error", (error) => reject(signal.aborted ? new ToolInputError(`fetch aborted or timed out: ${url.origin}`) : error));
    req.end();
  });
}

async function readPage(url: URL, response: IncomingMessage, maxBytes: number, signal: AbortSignal): Promise<FetchedPage> {
  const contentType = String(response.headers["content-type"] ?? "application/octet-stream");
  const base = { url: url.toString(), status: response.statusCode ?? 0, statusText: response.statusMessage ?? "", contentType };
  if (!TEXTUAL.test(contentType)) {
    response.destroy();
    return { ...base, body: `(binary content of type ${contentType} not shown)`, truncated: false };
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  try {
    for await (const chunk of response as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= maxBytes) {
        truncated = true;
        break;
      }
    }
  } catch (error) {
    if (signal.aborted) throw new ToolInputError(`fetch aborted or timed out while reading ${url.origin}`);
    throw error;
  } finally {
    response.destroy();
  }
  return { ...base, body: Buffer.concat(chunks).subarray(0, maxBytes).toString("utf8"), truncated };
}
