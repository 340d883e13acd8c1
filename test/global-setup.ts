/**
 * Bundles the functions once before the suite (infra/bundle.ts caches them by
 * input), so parallel test files that each deploy a stack never race to build
 * the same bundles on a fresh machine.
 */
import { join } from "node:path";
import { bundleFunctions } from "../infra/bundle";
import { FUNCTION_KEYS, FUNCTION_SPECS } from "../infra/functions";
import { REPO_ROOT } from "../infra/lambdas";

export default function setup(): void {
  const entries = Object.fromEntries(FUNCTION_KEYS.map((key) => [key, join(REPO_ROOT, FUNCTION_SPECS[key].entry)]));
  bundleFunctions({ entries, pluginModules: [], cacheDir: join(REPO_ROOT, "node_modules", ".cache", "agent-runner", "bundles"), projectRoot: REPO_ROOT });
}
