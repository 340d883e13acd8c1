/**
 * Attributes the local stack's memory per run (issue 16: RSS growth per run).
 * Starts the stack in this process (disk DATA_DIR, the bench model server),
 * drives a warm-up and then N one-call runs over a few lanes, and after each
 * phase waits for the stack to idle, forces GC and prints the split of
 * process.memoryUsage() (heapUsed / external / arrayBuffers / RSS) with the
 * sandboxes alive and each idle sandbox's heap after a full GC inside it.
 * `--snapshots DIR` writes a main-thread heap snapshot after
 * the warm-up and after the runs (compare with bench/heap-diff.ts).
 *
 *   node --expose-gc --import tsx bench/mem-probe.ts --runs 300 --lanes 4 [--snapshots /tmp/snap]
 *   # does a sandbox's live heap grow with the invocations it served? one sandbox per function, N then 2N runs:
 *   node --expose-gc --import tsx bench/mem-probe.ts --runs 100 --phases 2 --lanes 1 --max-concurrency 1 \
 *     [--snapshots /tmp/snap --sandbox-snapshots attempt,wsApi]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { writeHeapSnapshot } from "node:v8";
import { startLocalStack, type LocalStack } from "../infra/local/stack";
import { benchConfig, driveRun, openClient } from "./harness";
import { BenchModelServer } from "./model-server";
import type { TestWsClient } from "../test/support/ws-client";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "300" },
    warmup: { type: "string", default: "40" },
    lanes: { type: "string", default: "4" },
    snapshots: { type: "string" },
    idle: { type: "string", default: "0" },
    // Repeat the N runs: live sandbox heaps after N, 2N, ... invocations of the same sandboxes.
    phases: { type: "string", default: "1" },
    // Sandboxes per function (1: every invocation of a function lands on the same sandbox).
    "max-concurrency": { type: "string" },
    // Heap snapshots written inside the idle sandboxes of these functions (comma-separated keys) after each phase.
    "sandbox-snapshots": { type: "string" },
  },
});
const runs = Number(values.runs);
const warmup = Number(values.warmup);
const lanes = Number(values.lanes);

async function main(): Promise<void> {
  const model = await BenchModelServer.start();
  const dataDir = mkdtempSync(join(tmpdir(), "mem-probe-"));
  const maxConcurrency = values["max-concurrency"] ? Number(values["max-concurrency"]) : undefined;
  const stack = await startLocalStack({ config: benchConfig(model), dataDir, authToken: "bench-token", ...(maxConcurrency ? { maxConcurrency } : {}) });
  const clients: TestWsClient[] = [];
  try {
    for (let i = 0; i < lanes; i += 1) clients.push(await openClient(stack));
    await report(stack, "after start");
    await drive(clients, 0, warmup);
    await report(stack, `after ${warmup} warm-up runs`);
    snapshot("warm");
    await sandboxSnapshots(stack, "warm");
    const before = await settle(stack);
    let after = before;
    const phases = Number(values.phases);
    for (let phase = 1; phase <= phases; phase += 1) {
      await drive(clients, warmup + (phase - 1) * runs, runs);
      after = await report(stack, `after ${phase * runs} more runs`);
      await sandboxSnapshots(stack, `phase${phase}`);
    }
    snapshot("after");
    const per1000 = (key: keyof NodeJS.MemoryUsage) => (((after[key] - before[key]) / 1048576) * 1000) / (runs * phases);
    console.log(
      `per 1,000 runs: rss ${per1000("rss").toFixed(1)} MB, heapUsed ${per1000("heapUsed").toFixed(1)} MB, external ${per1000("external").toFixed(1)} MB, arrayBuffers ${per1000("arrayBuffers").toFixed(1)} MB`,
    );
    if (Number(values.idle) > 0) {
      await new Promise((resolve) => setTimeout(resolve, Number(values.idle)));
      await report(stack, `after ${values.idle} ms idle`);
    }
  } finally {
    await Promise.all(clients.map((c) => c.close()));
    await stack.close();
    await model.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function drive(clients: readonly TestWsClient[], from: number, count: number): Promise<void> {
  let next = from;
  let failures = 0;
  await Promise.all(
    clients.map(async (client) => {
      while (next < from + count) {
        const tag = `probe-${String(next++).padStart(5, "0")}`;
        const run = await driveRun(client, { sessionKey: `mem-${tag}`, shape: "one-call", runTag: tag });
        if (run.phase !== "end") failures += 1;
        client.frames.length = 0;
      }
    }),
  );
  if (failures) console.log(`${failures} of ${count} runs did not end cleanly`);
}

async function settle(stack: LocalStack): Promise<NodeJS.MemoryUsage> {
  await stack.idle();
  for (let i = 0; i < 3; i += 1) {
    globalThis.gc?.();
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return process.memoryUsage();
}

async function report(stack: LocalStack, label: string): Promise<NodeJS.MemoryUsage> {
  const usage = await settle(stack);
  const mb = (n: number) => (n / 1048576).toFixed(1);
  const sandboxes = Object.entries(stack.functions).map(([key, fn]) => `${key}=${fn.pool.sandboxCount()}`).join(" ");
  console.log(`${label}: rss ${mb(usage.rss)} heapUsed ${mb(usage.heapUsed)} heapTotal ${mb(usage.heapTotal)} external ${mb(usage.external)} arrayBuffers ${mb(usage.arrayBuffers)} MB; sandboxes ${sandboxes}`);
  const heaps = await Promise.all(Object.entries(stack.functions).map(async ([key, fn]) => [key, await fn.pool.idleHeaps({ gc: true })] as const));
  const line = heaps
    .filter(([, list]) => list.length > 0)
    .map(([key, list]) => `${key} ${list.map((h) => `${mb(h.heapUsed)}/${mb(h.heapTotal)}@${h.invocations}`).join(",")}`)
    .join("; ");
  const total = heaps.flatMap(([, list]) => list).reduce((sum, h) => sum + h.heapTotal, 0);
  console.log(`  sandbox heaps used/total MB@invocations served: ${line} (heapTotal of all: ${mb(total)} MB)`);
  return usage;
}

async function sandboxSnapshots(stack: LocalStack, name: string): Promise<void> {
  const dir = values.snapshots;
  const keys = values["sandbox-snapshots"]?.split(",") ?? [];
  if (!dir || keys.length === 0) return;
  await stack.idle();
  for (const key of keys) {
    const files = (await stack.functions[key]?.pool.snapshotIdle(join(dir, `${key}-${name}`))) ?? [];
    console.log(`sandbox heap snapshots (${key}): ${files.join(" ") || "none idle"}`);
  }
}

function snapshot(name: string): void {
  if (!values.snapshots) return;
  const file = writeHeapSnapshot(join(values.snapshots, `${name}.heapsnapshot`));
  console.log(`heap snapshot: ${file}`);
}

await main();
