import { hooksFromConfig } from "../hooks/from-config";
import type { HookRegistry } from "../hooks/registry";
import type { RunDeps } from "./deps";

/**
 * The hooks that observe the outer loop's own work (compaction, session
 * boundaries): those declared in configuration plus those registered in code,
 * as the attempt combines them (shared/run/attempt-wiring.ts).
 */
export function runHooks(deps: Pick<RunDeps, "config" | "hooks" | "log">): HookRegistry {
  return hooksFromConfig(deps.config.hooks, ({ hook, id, error }) => deps.log.warn("hook failed", { hook, id, error: String(error) })).combinedWith(deps.hooks);
}
