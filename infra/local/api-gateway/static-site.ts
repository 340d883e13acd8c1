import { readFile } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { extname, join, normalize, sep } from "node:path";
import { splitTarget } from "./http";

/** A folder of static files under a path prefix (the web console at `/console`). */
export interface StaticSite {
  /** `/console`: serves `/console`, `/console/` (index.html) and `/console/<file>`. */
  prefix: string;
  dir: string;
}

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
};

/** The site a request path belongs to, if any (REST paths never start with a site prefix). */
export function staticSiteOf(rawPath: string, sites: readonly StaticSite[]): StaticSite | undefined {
  return sites.find((site) => rawPath === site.prefix || rawPath.startsWith(`${site.prefix}/`));
}

/**
 * What CloudFront + S3 do for the deployed console (infra/console-site.ts),
 * reduced to GET/HEAD of files: no listing, no path outside the folder, a
 * plain 404 for anything missing (the page then uses its same-origin defaults).
 */
export async function serveStaticFile(req: IncomingMessage, res: ServerResponse, site: StaticSite): Promise<void> {
  req.resume();
  if (req.method !== "GET" && req.method !== "HEAD") return answer(res, 405, "text/plain", "method not allowed");
  const { rawPath } = splitTarget(req.url ?? "/");
  let relative: string;
  try {
    relative = decodeURIComponent(rawPath.slice(site.prefix.length).replace(/^\/+/, "")) || "index.html";
  } catch {
    return answer(res, 400, "text/plain", "bad path");
  }
  const path = normalize(join(site.dir, relative));
  if (!path.startsWith(normalize(site.dir.endsWith(sep) ? site.dir : site.dir + sep))) return answer(res, 404, "text/plain", "not found");
  const body = await readFile(path).catch(() => undefined);
  if (!body) return answer(res, 404, "text/plain", "not found");
  answer(res, 200, CONTENT_TYPES[extname(path)] ?? "application/octet-stream", req.method === "HEAD" ? undefined : body, body.length);
}

function answer(res: ServerResponse, status: number, contentType: string, body: string | Buffer | undefined, length?: number): void {
  res.writeHead(status, {
    "content-type": contentType,
    "content-length": length ?? Buffer.byteLength(body ?? ""),
    "cache-control": "no-cache",
    "x-content-type-options": "nosniff",
  });
  res.end(body);
}
