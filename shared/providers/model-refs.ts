/**
 * Model references (`provider/model`) without the providers behind them: the
 * functions that only route runs (intake, lanes, start, finalize, sweeper)
 * import this, never registry.ts, so their bundles carry no model SDK.
 */
import type { AgentConfig } from "../config/config";
import { OFFLINE_PROVIDER_ID } from "./offline";

/** The chain the outer loop walks on failover: the run's model, then the configured fallbacks. */
export function modelChain(config: AgentConfig, primary: string): string[] {
  return [primary, ...config.fallbackModels.filter((ref) => ref !== primary)];
}

export function isOfflineModel(ref: string): boolean {
  return ref.startsWith(`${OFFLINE_PROVIDER_ID}/`);
}
