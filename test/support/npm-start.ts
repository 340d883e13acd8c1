import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface StartedApp {
  restUrl: string;
  webSocketUrl: string;
  token: string;
  model: string;
  output: () => string;
  stop(): Promise<void>;
  /** `kill -9`: no shutdown hooks run; the data folder stays (a restart reuses it). */
  kill(): Promise<void>;
  dataDir: string;
}

export interface StartOptions {
  /** Reuse this data folder (a restart) and leave it in place on stop; else a throw-away one. */
  dataDir?: string;
}

/**
 * Boots the system exactly as `npm start` does (same entry, same defaults),
 * on a free port and a throw-away data folder, and reads what it prints.
 */
export async function startLikeNpmStart(env: Record<string, string> = {}, options: StartOptions = {}): Promise<StartedApp> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "agent-runner-"));
  const child = spawn(process.execPath, ["--import", "tsx", "infra/local/main.ts"], {
    cwd: process.cwd(),
    env: { ...process.env, PORT: "0", DATA_DIR: dataDir, LOG_LEVEL: "warn", AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (chunk) => (output += chunk));
  child.stderr!.on("data", (chunk) => (output += chunk));
  const banner = await waitForBanner(child, () => output);
  return {
    ...banner,
    output: () => output,
    dataDir,
    stop: async () => {
      await stopChild(child);
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
    kill: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGKILL");
      }),
  };
}

async function waitForBanner(child: ChildProcess, output: () => string) {
  const deadline = Date.now() + 150_000; // a loaded machine (8 agents testing) can take a minute and more
  while (Date.now() < deadline) {
    const text = output();
    const rest = /REST base URL : (\S+)/.exec(text);
    const ws = /WebSocket URL : (\S+)/.exec(text);
    const token = /auth token {4}: (\S+)/.exec(text);
    const model = /model {9}: (.+)/.exec(text);
    if (rest && ws && token && model) return { restUrl: rest[1], webSocketUrl: ws[1], token: token[1], model: model[1] };
    if (child.exitCode !== null) throw new Error(`npm start exited early:\n${text}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill("SIGKILL");
  throw new Error(`npm start did not print its banner:\n${output()}`);
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    child.once("exit", () => (clearTimeout(timer), resolve()));
    child.kill("SIGTERM");
  });
}
