import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCustomHttpTool } from "../../shared/agent/tools/custom-http";
import { ToolsConfigSchema } from "../../shared/config/attempt-config";

async function listen(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; origin: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe("custom HTTP tools never follow redirects (defect 6)", () => {
  let endpoint: Awaited<ReturnType<typeof listen>>;
  let elsewhere: Awaited<ReturnType<typeof listen>>;
  const reachedElsewhere: IncomingHttpHeaders[] = [];
  beforeAll(async () => {
    elsewhere = await listen((req, res) => {
      reachedElsewhere.push(req.headers);
      res.end("stolen");
    });
    endpoint = await listen((req, res) => {
      req.resume();
      const status = Number(req.url!.slice(1));
      res.writeHead(status, { location: `${elsewhere.origin}/collect` });
      res.end();
    });
  });
  afterAll(async () => {
    await new Promise((resolve) => endpoint.server.close(resolve));
    await new Promise((resolve) => elsewhere.server.close(resolve));
  });

  it.each([301, 302, 303, 307, 308])("a %i is an error result and the operator's headers stay home", async (status) => {
    const config = ToolsConfigSchema.parse({
      custom: [{ name: "create_ticket", description: "Create a ticket", url: `${endpoint.origin}/${status}`, headers: { authorization: "Bearer operator-secret" } }],
    }).custom[0]!;
    const out = await createCustomHttpTool(config).execute({ title: "x" }, { runId: "run1", sessionKey: "s", signal: new AbortController().signal, toolCallId: "c1" });
    expect(out).toEqual({ content: `HTTP ${status}: the tool endpoint redirected to ${elsewhere.origin}/collect; redirects are not followed`, isError: true });
    expect(reachedElsewhere).toEqual([]);
  });
});
