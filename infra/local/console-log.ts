import type { Log } from "../../shared/run/deps";

const LEVELS = ["debug", "info", "warn", "error", "silent"] as const;

/** Human-readable logs for `npm start` (Lambda uses Powertools' JSON logger). */
export function consoleLog(level: string): Log {
  const threshold = Math.max(0, LEVELS.indexOf(level.toLowerCase() as (typeof LEVELS)[number]));
  const write = (name: (typeof LEVELS)[number]) => (message: string, extra?: Record<string, unknown>) => {
    if (LEVELS.indexOf(name) < threshold) return;
    const detail = extra && Object.keys(extra).length > 0 ? ` ${JSON.stringify(extra)}` : "";
    process.stdout.write(`${new Date().toISOString()} ${name.toUpperCase().padEnd(5)} ${message}${detail}\n`);
  };
  return { info: write("info"), warn: write("warn"), error: write("error") };
}
