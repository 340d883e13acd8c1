/**
 * Two V8 heap snapshots of `npm start`'s main thread, each taken idle after a
 * full GC: one after a warm-up, one after more runs (one-call runs over
 * WebSocket, a fresh session each, `lanes` at a time, offline model). Compare
 * them with bench/heap-diff.ts (docs/local-memory.md, "Stop 17").
 *
 *   npx tsx bench/npm-start-snapshots.ts [--warmup 200] [--runs 600] [--lanes 4] [--dir /tmp/npm-start-snapshots]
 *   node --import tsx bench/heap-diff.ts <dir>/<first>.heapsnapshot <dir>/<second>.heapsnapshot
 */
import { mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { TestWsClient } from "../test/support/ws-client";
import { driveRun } from "./harness";
import { startApp, stopApp } from "./phases/foundation";

const { values } = parseArgs({
  options: { warmup: { type: "string", default: "200" }, runs: { type: "string", default: "600" }, lanes: { type: "string", default: "4" }, dir: { type: "string", default: "/tmp/npm-start-snapshots" } },
});
const dir = values.dir;
mkdirSync(dir, { recursive: true });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `count` runs numbered from `from`, spread over the clients (one lane each). */
async function driveLanes(clients: TestWsClient[], from: number, count: number): Promise<void> {
  const perLane = Math.ceil(count / clients.length);
  await Promise.all(
    clients.map(async (client, lane) => {
      const start = from + lane * perLane;
      for (let i = start; i < Math.min(start + perLane, from + count); i += 1) {
        const tag = `snap-${String(i).padStart(5, "0")}`;
        await driveRun(client, { sessionKey: `bench-${tag}`, shape: "one-call", runTag: tag });
      }
    }),
  );
}

/** Idle (sandboxes reaped), GC'd (SIGUSR2, LOCAL_MEMORY_DIAGNOSTICS), then SIGUSR1 writes the snapshot; answers its path. */
async function snapshot(pid: number): Promise<string> {
  await sleep(8_000);
  for (let i = 0; i < 3; i += 1) {
    process.kill(pid, "SIGUSR2");
    await sleep(1_500);
  }
  const before = new Set(readdirSync(dir));
  process.kill(pid, "SIGUSR1");
  for (;;) {
    await sleep(2_000);
    const written = readdirSync(dir).find((file) => !before.has(file) && file.endsWith(".heapsnapshot"));
    // V8 writes the file in one go after creating it: give it time to finish.
    if (written) return (await sleep(4_000), join(dir, written));
  }
}

const app = await startApp({
  env: { LOCAL_SANDBOX_IDLE_MS: "2000", LOCAL_MEMORY_DIAGNOSTICS: "1", NODE_OPTIONS: `--heapsnapshot-signal=SIGUSR1 --diagnostic-dir=${dir}` },
});
const clients: TestWsClient[] = [];
try {
  for (let lane = 0; lane < Number(values.lanes); lane += 1) {
    const client = await TestWsClient.open(app.webSocketUrl);
    await client.request("connect", { auth: { token: app.token } });
    clients.push(client);
  }
  await driveLanes(clients, 0, Number(values.warmup));
  console.log(`after ${values.warmup} runs: ${await snapshot(app.child.pid!)}`);
  await driveLanes(clients, Number(values.warmup), Number(values.runs));
  console.log(`after ${Number(values.warmup) + Number(values.runs)} runs: ${await snapshot(app.child.pid!)}`);
} finally {
  await Promise.all(clients.map((client) => client.close()));
  await stopApp(app);
}
