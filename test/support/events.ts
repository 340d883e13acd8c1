import { readFileSync } from "node:fs";
import { join } from "node:path";

/** Loads a sample event from `events/` (the same files `sam local invoke` uses). */
export function sampleEvent<T = any>(name: string): T {
  return JSON.parse(readFileSync(join(process.cwd(), "events", name), "utf8")) as T;
}
