import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCurrentTimeTool } from "../../shared/agent/tools/current-time";
import { createCustomHttpTool } from "../../shared/agent/tools/custom-http";
import { createHttpFetchTool, guardedFetch, htmlToText, type AddressPolicy } from "../../shared/agent/tools/http-fetch";
import { embeddedIPv4, isBlockedAddress, isBlockedHostname } from "../../shared/agent/tools/ssrf-guard";
import type { ToolContext } from "../../shared/agent/tools/types";
import { ToolsConfigSchema } from "../../shared/config/attempt-config";

const context = (): ToolContext => ({ runId: "run1", sessionKey: "s", signal: new AbortController().signal, toolCallId: "call_9" });
const limits = { maxBytes: 1000, timeoutMs: 2000, maxRedirects: 2 };
/** Tests reach a loopback server only by opting out of the guard explicitly. */
const loopbackAllowed: AddressPolicy = (address) => address === "127.0.0.1" || !isBlockedAddress(address);

describe("SSRF guard", () => {
  it.each([
    "127.0.0.1",
    "127.255.255.254",
    "10.0.0.5",
    "172.16.3.4",
    "172.31.255.255",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "0.0.0.0",
    "224.0.0.1",
    "255.255.255.255",
    "::1",
    "::",
    "fe80::1",
    "fd00:ec2::254",
    "fc00::1",
    "::ffff:127.0.0.1",
    "::ffff:7f00:1",
    "64:ff9b::a9fe:a9fe",
    "2002:c0a8:0101::1",
    "not-an-ip",
  ])("refuses %s", (address) => {
    expect(isBlockedAddress(address)).toBe(true);
  });

  it.each(["93.184.216.34", "8.8.8.8", "172.32.0.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"])("allows public %s", (address) => {
    expect(isBlockedAddress(address)).toBe(false);
  });

  it("reads IPv4 embedded in IPv6 and knows local host names", () => {
    expect(embeddedIPv4("::ffff:10.1.2.3")).toBe("10.1.2.3");
    expect(embeddedIPv4("64:ff9b::0a00:0001")).toBe("10.0.0.1");
    expect(isBlockedHostname("localhost")).toBe(true);
    expect(isBlockedHostname("api.localhost.")).toBe(true);
    expect(isBlockedHostname("metadata.google.internal")).toBe(true);
    expect(isBlockedHostname("example.com")).toBe(false);
  });
});

describe("http_fetch", () => {
  let server: Server;
  let origin: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === "/page") {
        res.writeHead(200, { "content-type": "text/html" });
        res.end("<html><script>evil()</script><p>Hello &amp; welcome</p></html>");
      } else if (req.url === "/big") {
        res.writeHead(200, { "content-type": "text/plain" });
        res.end("b".repeat(50_000));
      } else if (req.url === "/to-metadata") {
        res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data/" });
        res.end();
      } else if (req.url === "/loop") {
        res.writeHead(302, { location: "/loop" });
        res.end();
      } else if (req.url === "/slow") {
        res.writeHead(200, { "content-type": "text/plain" });
        res.write("start");
      } else if (req.url === "/image") {
        res.writeHead(200, { "content-type": "image/png" });
        res.end(Buffer.alloc(10));
      } else {
        res.writeHead(404, { "content-type": "text/plain" });
        res.end("nope");
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it("refuses loopback, link-local and private targets with the default policy, before connecting", async () => {
    const tool = createHttpFetchTool(limits);
    await expect(tool.execute({ url: `${origin}/page` }, context())).rejects.toThrow(/refused: 127\.0\.0\.1 resolves to 127\.0\.0\.1/);
    await expect(tool.execute({ url: "http://169.254.169.254/latest/meta-data/" }, context())).rejects.toThrow(/refused/);
    await expect(tool.execute({ url: "http://localhost:1/" }, context())).rejects.toThrow(/local address/);
    await expect(tool.execute({ url: "http://[::1]:1/" }, context())).rejects.toThrow(/refused/);
    await expect(tool.execute({ url: "file:///etc/passwd" }, context())).rejects.toThrow(/only http and https/);
    await expect(tool.execute({ url: "http://user:pw@example.com/" }, context())).rejects.toThrow(/credentials/);
  });

  it("re-checks every redirect hop: a public page cannot bounce the fetch to the metadata service", async () => {
    await expect(guardedFetch(`${origin}/to-metadata`, limits, loopbackAllowed, new AbortController().signal)).rejects.toThrow(/169\.254\.169\.254/);
    await expect(guardedFetch(`${origin}/loop`, limits, loopbackAllowed, new AbortController().signal)).rejects.toThrow(/too many redirects \(limit 2\)/);
  });

  it("returns text (HTML reduced), cuts at maxBytes, enforces its time limit, and skips binary bodies", async () => {
    const tool = createHttpFetchTool(limits, loopbackAllowed);
    const page = await tool.execute({ url: `${origin}/page` }, context());
    expect(page.content).toContain("HTTP 200");
    expect(page.content).toContain("Hello & welcome");
    expect(page.content).not.toContain("evil");
    const big = await tool.execute({ url: `${origin}/big` }, context());
    expect(big.content).toContain("[response cut at 1000 bytes]");
    expect(big.content).toMatch(/\n\nb{1000}\n\n\[response cut/);
    const missing = await tool.execute({ url: `${origin}/missing` }, context());
    expect(missing).toMatchObject({ isError: true });
    const image = await tool.execute({ url: `${origin}/image` }, context());
    expect(image.content).toContain("binary content of type image/png");
    await expect(createHttpFetchTool({ ...limits, timeoutMs: 100 }, loopbackAllowed).execute({ url: `${origin}/slow` }, context())).rejects.toThrow(/timed out/);
  });

  it("reduces HTML to readable text", () => {
    expect(htmlToText("<h1>T</h1><p>a<br>b</p><style>x{}</style>")).toBe("T\na\nb");
  });
});

describe("current_time", () => {
  it("reports UTC and a requested time zone from an injected clock; rejects unknown zones", async () => {
    const tool = createCurrentTimeTool(() => Date.UTC(2026, 0, 15, 12, 30));
    const out = JSON.parse((await tool.execute({ timezone: "Europe/Madrid" }, context())).content);
    expect(out).toMatchObject({ utc: "2026-01-15T12:30:00.000Z", timezone: "Europe/Madrid", unixMs: Date.UTC(2026, 0, 15, 12, 30) });
    expect(out.local).toBe("Thursday 2026-01-15 13:30:00 GMT+1");
    await expect(tool.execute({ timezone: "Mars/Olympus" }, context())).rejects.toThrow(/unknown time zone/);
  });
});

describe("custom tools declared in configuration", () => {
  let server: Server;
  const received: { headers: Record<string, unknown>; body: unknown }[] = [];
  let url: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk) => (body += chunk));
      req.on("end", () => {
        received.push({ headers: req.headers, body: JSON.parse(body) });
        res.writeHead(req.url === "/fail" ? 500 : 200, { "content-type": "text/plain" });
        res.end(req.url === "/fail" ? "exploded" : "ticket T-1 created");
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => new Promise((resolve) => server.close(resolve)));

  it("POSTs the arguments with the run and tool call ids and returns the body; mutating by default", async () => {
    const config = ToolsConfigSchema.parse({
      custom: [{ name: "create_ticket", description: "Create a ticket", url: `${url}/tickets`, headers: { authorization: "Bearer t" } }],
    }).custom[0];
    const tool = createCustomHttpTool(config);
    expect(tool.mutating).toBe(true);
    const out = await tool.execute({ title: "Printer" }, context());
    expect(out).toEqual({ content: "ticket T-1 created" });
    expect(received[0]).toMatchObject({
      body: { title: "Printer" },
      headers: { "x-agent-run-id": "run1", "x-agent-tool-call-id": "call_9", "idempotency-key": "call_9", authorization: "Bearer t" },
    });
    const failing = createCustomHttpTool({ ...config, url: `${url}/fail` });
    expect(await failing.execute({}, context())).toEqual({ content: "HTTP 500: exploded", isError: true });
  });
});
