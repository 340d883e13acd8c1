/**
 * `npm start`: the whole system on loopback with nothing but Node — no Docker,
 * no AWS account, no API key (the built-in offline model answers then).
 *
 * Environment: PORT (3000), HOST (127.0.0.1), DATA_DIR (./.data), AUTH_TOKEN
 * (else a dev token kept in DATA_DIR), AGENT_RUNNER_CONFIG (a JSON config
 * file; ./agent-runner.config.json when present), MODEL, OPENAI_API_KEY,
 * OPENAI_BASE_URL, ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, LOG_LEVEL (info).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { join, resolve } from "node:path";
import { loadAgentConfig } from "../../shared/config/config";
import { isOfflineModel } from "../../shared/providers/registry";
import { consoleLog } from "./console-log";
import { startLocalStack } from "./stack";

async function main(): Promise<void> {
  const startedAt = Date.now();
  const env = process.env;
  const dataDir = resolve(env.DATA_DIR ?? ".data");
  mkdirSync(dataDir, { recursive: true });
  const configFile = env.AGENT_RUNNER_CONFIG ?? (existsSync("agent-runner.config.json") ? "agent-runner.config.json" : undefined);
  const config = loadAgentConfig(env, configFile);
  const log = consoleLog(env.LOG_LEVEL ?? "info");
  const stack = await startLocalStack({
    port: Number(env.PORT ?? 3000),
    host: env.HOST ?? "127.0.0.1",
    dataDir: join(dataDir, "dynamodb"),
    config,
    authToken: env.AUTH_TOKEN ?? devToken(dataDir),
    log,
  });
  printBanner(stack, config.model, Date.now() - startedAt, dataDir);
  const stop = async () => {
    log.info("shutting down");
    await stack.close();
    process.exit(0);
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

/** A stable dev token, so clients keep working across restarts. */
function devToken(dataDir: string): string {
  const file = join(dataDir, "dev-token");
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  const token = `dev_${randomBytes(18).toString("base64url")}`;
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  return token;
}

function printBanner(stack: { restUrl: string; webSocketUrl: string; authToken: string }, model: string, readyMs: number, dataDir: string): void {
  const offline = isOfflineModel(model);
  const lines = [
    "",
    `agent runner ready in ${readyMs} ms (local stack: dynalite + fauxqs + local Step Functions)`,
    `  REST base URL : ${stack.restUrl}`,
    `  WebSocket URL : ${stack.webSocketUrl}`,
    `  auth token    : ${stack.authToken}`,
    `  model         : ${model}${offline ? "  [OFFLINE built-in deterministic model: no API key configured]" : ""}`,
    `  data          : ${dataDir}`,
    "",
    "try:",
    `  curl -s -X POST ${stack.restUrl}/v1/agent -H 'authorization: Bearer ${stack.authToken}' \\`,
    `    -H 'content-type: application/json' -d '{"sessionKey":"main","message":"hello","idempotencyKey":"k1"}'`,
    "",
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`failed to start: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
  process.exit(1);
});
