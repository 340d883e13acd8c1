import type { HookEvent, HookHandler, HookName, HookRegistration, HookResult } from "./types";

export interface HookErrorReport {
  hook: HookName;
  id: string;
  error: unknown;
}

/**
 * Where hooks are registered. In a serverless runtime there is no plugin
 * loader: hooks are code registered at cold start, or declared in
 * configuration (see ./from-config). One registry per attempt is cheap.
 */
export class HookRegistry {
  private readonly entries: HookRegistration<HookName>[] = [];
  private order = 0;

  constructor(private readonly onError: (report: HookErrorReport) => void = () => undefined) {}

  register<N extends HookName>(name: N, handler: HookHandler<N>, options: { id?: string; priority?: number } = {}): this {
    this.order += 1;
    const entry: HookRegistration<N> = { name, handler, id: options.id ?? `${name}#${this.order}`, priority: options.priority ?? 0, order: this.order };
    this.entries.push(entry as unknown as HookRegistration<HookName>);
    return this;
  }

  /** A registry holding this one's handlers and then `others'` (priorities still decide the order). */
  combinedWith(...others: readonly (HookRegistry | undefined)[]): HookRegistry {
    const combined = new HookRegistry(this.onError);
    for (const registry of [this, ...others]) {
      for (const entry of registry?.entries ?? []) combined.register(entry.name, entry.handler, { id: entry.id, priority: entry.priority });
    }
    return combined;
  }

  has(name: HookName): boolean {
    return this.entries.some((entry) => entry.name === name);
  }

  /** Higher priority first; equal priorities in registration order. */
  handlersOf<N extends HookName>(name: N): HookRegistration<N>[] {
    return (this.entries.filter((entry) => entry.name === name) as unknown as HookRegistration<N>[]).sort(
      (a, b) => b.priority - a.priority || a.order - b.order,
    );
  }

  reportError(hook: HookName, id: string, error: unknown): void {
    try {
      this.onError({ hook, id, error });
    } catch {
      // A broken logger must not break the run.
    }
  }

  /** Calls one handler; a throw becomes `{ failed }` so each runner applies its own failure rule. */
  async call<N extends HookName>(entry: HookRegistration<N>, event: HookEvent<N>): Promise<{ result?: HookResult<N>; failed?: unknown }> {
    try {
      const result = await (entry.handler as (event: HookEvent<N>) => HookResult<N> | void | Promise<HookResult<N> | void>)(event);
      return { result: result ?? undefined };
    } catch (error) {
      this.reportError(entry.name, entry.id, error);
      return { failed: error };
    }
  }
}

export const EMPTY_HOOKS = new HookRegistry();
