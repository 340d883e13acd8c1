/**
 * `npm start`: the whole system on loopback with nothing but Node — no Docker,
 * no AWS account, no API key (the built-in offline model answers then). The
 * CDK app is synthesized and its cloud assembly deployed onto local emulators
 * (infra/local/stack.ts); `npm start -- --assembly <dir>` deploys an existing
 * assembly (`npm run synth`'s cdk.out, or a CI pipeline's) without synthesizing.
 *
 * Environment: PORT (3000), HOST (127.0.0.1), DATA_DIR (./.data), AUTH_TOKEN
 * (else a dev token kept in DATA_DIR), AGENT_RUNNER_CONFIG (a JSON config
 * file; ./agent-runner.config.json when present), MODEL, OPENAI_API_KEY,
 * OPENAI_BASE_URL, ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, AWS_EDGE_PORT (PORT + 1; any free port when PORT is 0), LOG_LEVEL (info:
 * function logs at warn and above; debug: all of them), LOCAL_SANDBOX_YOUNG_GENERATION_MB
 * (8: each sandbox's young generation; docs/local-memory.md), LOCAL_SANDBOX_IDLE_MS
 * (60000: an idle sandbox is stopped after it), LOCAL_SANDBOX_SOFT_CAP (two per core: sandboxes a
 * function starts at once; docs/local-deploy.md, "How many sandboxes"), LOCAL_MEMORY_DIAGNOSTICS (1: SIGUSR2 runs a
 * GC and prints the heap and the sandboxes alive; infra/local/memory-diagnostics.ts).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { isOfflineModel } from "../../shared/providers/model-refs";
import { consoleLog } from "./console-log";
import { edgePort, frontDoorPort } from "./ports";
import { installMemoryDiagnostics, memoryDiagnosticsEnabled } from "./memory-diagnostics";
import { LOCAL_REGION, startLocalStack, type LocalStack } from "./stack";

/**
 * `npm start` packs every sandbox into one process: an 8 MB young generation
 * per sandbox (instead of V8's 16 MB semi-spaces) kept 68 MB less RSS with the
 * same sandboxes after 200 runs (docs/local-memory.md). Tests and in-process
 * tools keep V8's default unless they set it.
 */
const NPM_START_YOUNG_GENERATION_MB = "8";

async function main(): Promise<void> {
  const startedAt = Date.now();
  process.env.LOCAL_SANDBOX_YOUNG_GENERATION_MB ??= NPM_START_YOUNG_GENERATION_MB;
  const { values } = parseArgs({ options: { assembly: { type: "string" } }, allowPositionals: false });
  const env = process.env;
  const dataDir = resolve(env.DATA_DIR ?? ".data");
  mkdirSync(dataDir, { recursive: true });
  const log = consoleLog(env.LOG_LEVEL ?? "info");
  const stack = await startLocalStack({
    port: frontDoorPort(env),
    edgePort: edgePort(env),
    host: env.HOST ?? "127.0.0.1",
    dataDir,
    synthInChild: true,
    ...(values.assembly ? { assemblyDir: resolve(values.assembly) } : {}),
    authToken: env.AUTH_TOKEN ?? devToken(dataDir),
    log,
    functionLogs: functionLogPrinter(env.LOG_LEVEL ?? "info"),
  });
  // `npm run keys` finds the running stack's table and edge here.
  writeFileSync(join(dataDir, "stack-outputs.json"), `${JSON.stringify({ ...stack.outputs, AwsEndpoint: stack.endpoints.edge, Region: LOCAL_REGION }, null, 2)}\n`);
  printBanner(stack, Date.now() - startedAt, dataDir, values.assembly);
  if (memoryDiagnosticsEnabled(env)) installMemoryDiagnostics(() => [...stack.deployed.functions.values()].map((fn) => fn.pool));
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

const QUIET_LEVELS = new Set(["DEBUG", "INFO", "TRACE"]);

/** Function logs (Powertools JSON lines) are CloudWatch's locally: warnings and errors by default. */
function functionLogPrinter(level: string): (fn: string, line: string) => void {
  const verbose = level.toLowerCase() === "debug";
  return (fn, line) => {
    const parsed = /"level":"([A-Z]+)"/.exec(line);
    if (!verbose && parsed && QUIET_LEVELS.has(parsed[1])) return;
    process.stderr.write(`[${fn}] ${line}\n`);
  };
}

function printBanner(stack: LocalStack, readyMs: number, dataDir: string, assembly: string | undefined): void {
  const model = stack.config.model;
  const offline = isOfflineModel(model);
  const lines = [
    "",
    `agent runner ready in ${readyMs} ms (${assembly ? `cloud assembly ${assembly}` : "synthesized CDK app"} deployed onto dynalite + fauxqs + local Step Functions)`,
    `  REST base URL : ${stack.restUrl}`,
    `  WebSocket URL : ${stack.webSocketUrl}`,
    `  OpenAI API    : ${stack.restUrl}/v1  (chat completions, responses, models; docs/openai-api.md)`,
    `  API documents : ${stack.restUrl}/openapi.json (REST, OpenAPI 3.1), docs/schemas/ (WebSocket frames)`,
    `  web console   : ${stack.restUrl}/console  (paste the auth token below)`,
    `  auth token    : ${stack.authToken}`,
    `  model         : ${model}${offline ? "  [OFFLINE built-in deterministic model: no API key configured]" : ""}`,
    `  config        : version ${stack.outputs.ConfigVersion ?? "?"}`,
    `  data          : ${dataDir}`,
    `  AWS endpoint  : ${stack.endpoints.edge}  (every service; IAM enforced per function, admin key "local")`,
    `  emulators     : dynamodb ${stack.endpoints.dynamodb}, sqs ${stack.endpoints.sqs}, states ${stack.endpoints.stepFunctions}, secretsmanager/lambda/iam via ${stack.endpoints.edge}`,
    `  management API: ${stack.restUrl}/prod/@connections/{id}  (WebSocket PostToConnection)`,
    `  functions     : ${Object.values(stack.functions).map((fn) => fn.name).join(", ")}`,
    "",
    "try:",
    `  curl -s -X POST ${stack.restUrl}/v1/agent -H 'authorization: Bearer ${stack.authToken}' \\`,
    `    -H 'content-type: application/json' -d '{"sessionKey":"main","message":"hello","idempotencyKey":"k1"}'`,
    `  curl -sN ${stack.restUrl}/v1/chat/completions -H 'authorization: Bearer ${stack.authToken}' \\`,
    `    -H 'content-type: application/json' -d '{"model":"openclaw:main","stream":true,"messages":[{"role":"user","content":"hello"}]}'`,
    "",
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`failed to start: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
  process.exit(1);
});
