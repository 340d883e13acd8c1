/**
 * `npm run agent -- --session main "what is 6*7?"`: sends one message over
 * the WebSocket API and streams the reply as it arrives (tool activity on
 * stderr), resuming by itself if the socket drops. Exit code: 0 when the run
 * ends ok, 1 when it fails, times out or is aborted, 2 for usage errors.
 *
 * Options: --session <key> (default "main"), --url <ws url> (env
 * AGENT_RUNNER_WS_URL, default ws://127.0.0.1:3000/ws), --token <token> (env
 * AGENT_RUNNER_TOKEN or AUTH_TOKEN, else DATA_DIR/dev-token written by
 * `npm start`), --model <provider/model>, --thinking (stream reasoning),
 * --timeout <seconds>, --json (print every event as a JSON line).
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { GatewayRequestError, UsageError } from "./errors";
import { followRun, type RunEvent } from "./run-follower";

interface CliOptions {
  url: string;
  token: string;
  params: Record<string, unknown> & { message: string };
  json: boolean;
}

function parseCli(argv: string[], env: NodeJS.ProcessEnv): CliOptions {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      session: { type: "string", default: "main" },
      url: { type: "string" },
      token: { type: "string" },
      model: { type: "string" },
      thinking: { type: "boolean", default: false },
      timeout: { type: "string" },
      json: { type: "boolean", default: false },
    },
  });
  const message = positionals.join(" ").trim();
  if (!message) throw new UsageError('usage: npm run agent -- [--session main] [--url ws://…] [--token …] "message"');
  const token = values.token ?? env.AGENT_RUNNER_TOKEN ?? env.AUTH_TOKEN ?? devToken(env);
  if (!token) throw new UsageError("no token: pass --token, set AGENT_RUNNER_TOKEN, or run `npm start` first (it writes .data/dev-token)");
  return {
    url: values.url ?? env.AGENT_RUNNER_WS_URL ?? "ws://127.0.0.1:3000/ws",
    token,
    json: values.json ?? false,
    params: {
      sessionKey: values.session ?? "main",
      message,
      ...(values.model ? { model: values.model } : {}),
      ...(values.thinking ? { streamThinking: true } : {}),
      ...(values.timeout ? { timeoutSeconds: Number(values.timeout) } : {}),
    },
  };
}

function devToken(env: NodeJS.ProcessEnv): string | undefined {
  const file = join(resolve(env.DATA_DIR ?? ".data"), "dev-token");
  return existsSync(file) ? readFileSync(file, "utf8").trim() : undefined;
}

/** Human output: reply text on stdout as it streams, everything else on stderr. */
function printer(json: boolean): (event: RunEvent) => void {
  if (json) return (event) => process.stdout.write(`${JSON.stringify(event)}\n`);
  let inThinking = false;
  return (event) => {
    const data = event.data;
    // A failed attempt's partial text is taken back: a terminal cannot unprint it, so say so.
    if (event.stream === "assistant" && data.reset === true) process.stderr.write("\n[retrying: the partial answer above is discarded]\n");
    else if (event.stream === "assistant") process.stdout.write(String(data.delta ?? ""));
    else if (event.stream === "thinking") {
      if (!inThinking) process.stderr.write("\n[thinking] ");
      inThinking = true;
      process.stderr.write(String(data.delta ?? ""));
      return;
    } else if (event.stream === "tool" && data.phase === "start") process.stderr.write(`\n[tool] ${String(data.name)} ${JSON.stringify(data.args)}\n`);
    else if (event.stream === "tool" && data.phase === "result") process.stderr.write(`[tool] ${String(data.name)} -> ${data.isError ? "error: " : ""}${String(data.result).slice(0, 200)}\n`);
    else if (event.stream === "compaction") process.stderr.write(`\n[compaction ${String(data.phase)}]\n`);
    else if (event.stream === "lifecycle" && data.phase === "end") process.stdout.write("\n");
    else if (event.stream === "lifecycle" && data.phase === "error") process.stderr.write(`\n[${String(data.status ?? "error")}] ${String(data.error)}\n`);
    inThinking = false;
  };
}

async function main(): Promise<number> {
  let options: CliOptions;
  try {
    options = parseCli(process.argv.slice(2), process.env);
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    return 2;
  }
  const result = await followRun({
    url: options.url,
    token: options.token,
    params: options.params,
    onEvent: printer(options.json),
    onReconnect: (attempt, afterSeq) => process.stderr.write(`\n[reconnected (${attempt}); resuming after event ${afterSeq}]\n`),
  });
  return result.status === "ok" ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof GatewayRequestError ? `request failed: ${error.message}` : String(error)}\n`);
    process.exit(1);
  },
);
