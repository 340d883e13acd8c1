/**
 * `LOCAL_MEMORY_DIAGNOSTICS=1 npm start`: each SIGUSR2 runs a full GC of the
 * main thread and prints one line, `memory diagnostics: {json}`, with the
 * sandboxes alive (busy or idle) and the main thread's heap after that GC.
 * The memory bench (bench/phases/memory.ts) uses it to take idle samples
 * without garbage in them: it signals until no sandbox is alive, then reads
 * RSS. Off by default: a signal handler and a GC on demand are diagnostics,
 * not something `npm start` needs.
 */
import { runInNewContext } from "node:vm";
import v8 from "node:v8";

export const MEMORY_DIAGNOSTICS_PREFIX = "memory diagnostics: ";

export interface MemoryDiagnostics {
  sandboxes: number;
  busySandboxes: number;
  rssMb: number;
  heapUsedMb: number;
  heapTotalMb: number;
  externalMb: number;
  arrayBuffersMb: number;
}

interface Pools {
  sandboxCount(): number;
  busyCount(): number;
}

export function memoryDiagnosticsEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.LOCAL_MEMORY_DIAGNOSTICS === "1";
}

/** Installs the SIGUSR2 handler; `pools` is read at each signal (sandboxes come and go). */
export function installMemoryDiagnostics(pools: () => Iterable<Pools>, write: (line: string) => void = (line) => process.stdout.write(line)): void {
  const gc = fullGc();
  process.on("SIGUSR2", () => {
    gc();
    write(`${MEMORY_DIAGNOSTICS_PREFIX}${JSON.stringify(memoryDiagnostics([...pools()]))}\n`);
  });
}

export function memoryDiagnostics(pools: readonly Pools[]): MemoryDiagnostics {
  const usage = process.memoryUsage();
  const mb = (bytes: number) => Math.round(bytes / 104_857.6) / 10;
  return {
    sandboxes: pools.reduce((sum, pool) => sum + pool.sandboxCount(), 0),
    busySandboxes: pools.reduce((sum, pool) => sum + pool.busyCount(), 0),
    rssMb: mb(usage.rss),
    heapUsedMb: mb(usage.heapUsed),
    heapTotalMb: mb(usage.heapTotal),
    externalMb: mb(usage.external),
    arrayBuffersMb: mb(usage.arrayBuffers),
  };
}

/** `global.gc` when Node runs with --expose-gc, else the same function obtained at run time (as the sandboxes' bootstrap does). */
function fullGc(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed) return exposed;
  v8.setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}
