/**
 * The soak's timeline of what happened to each run (bench/soak.ts): every SDK
 * call a function made that names the run or its session (the edge sees them
 * all, faulted ones included) and every state of its executions. A run that
 * ends on time has its lines dropped, so what is kept is bounded by the runs
 * in flight; a late or lost run's lines are printed with the report. Also,
 * for every run: the invocations that failed (a dispatcher past its timeout,
 * a throttled task) and each sweeper tick, which name no run but explain a
 * delay (a lost dispatch waits for a tick or a redelivery).
 */
import type { EdgeCall } from "../infra/local/aws-edge";
import type { LocalStackObserver } from "../infra/local/stack";
import type { LocalExecutionEvent } from "../infra/local/step-functions/runner";

const RUN_ID = /run_[A-Za-z0-9_-]{32}/g;
/** Session keys of the soak (`soak-<s>`); idempotency keys are `soak-run-<n>` and do not match. */
const SESSION_KEY = /soak-\d+/g;

const MAX_SHARED = 2_000;

interface Line {
  at: number;
  text: string;
}

export class SoakTrace {
  private readonly origin = Date.now();
  private readonly lines = new Map<string, Line[]>();
  /** Invocation failures and sweeper ticks, the newest MAX_SHARED. */
  private shared: Line[] = [];

  observer(): LocalStackObserver {
    return {
      onEdgeCall: (call) => this.edgeCall(call),
      onExecutionEvent: (event) => this.executionEvent(event),
      aroundInvoke: (key, invoke) => this.invocation(key, invoke),
    };
  }

  /** The run's lines and its session's since `since` (ms epoch), in time order, as `+<s> <what>`. */
  timeline(runId: string, sessionKey: string, since = 0): string[] {
    const mine = [...(this.lines.get(runId) ?? []), ...[...(this.lines.get(sessionKey) ?? []), ...this.shared].filter((line) => line.at >= since)];
    const unique = [...new Map(mine.map((line) => [`${line.at} ${line.text}`, line])).values()];
    return unique.sort((a, b) => a.at - b.at).map((line) => `+${((line.at - this.origin) / 1000).toFixed(1)}s ${line.text}`);
  }

  /** The run ended on time: its lines go, and its session's older than `before`. */
  forget(runId: string, sessionKey: string, before: number): void {
    this.lines.delete(runId);
    const session = this.lines.get(sessionKey);
    if (session) this.lines.set(sessionKey, session.filter((line) => line.at >= before));
  }

  private edgeCall(call: EdgeCall): void {
    // arn:aws:sts::<account>:assumed-role/<role>/<function name>; the name shortened to what it runs.
    const role = /assumed-role\/[^/]+\/(.+)$/.exec(call.principalArn ?? "")?.[1]?.replace(/^AgentRunner-Runner/, "").replace(/Fn[0-9A-F]{8}$/, "");
    // The soak's own polling runs with admin credentials: not part of a run's story.
    if (!role) return;
    const body = call.requestBody.toString("utf8");
    const refused = call.statusCode >= 400 || call.statusCode === 0 ? ` -> ${call.statusCode} ${errorName(call.responseBody)}` : "";
    const detail = keyDetail(body);
    this.add(body, `${role} ${call.action}${detail}${refused}`);
  }

  private executionEvent(event: LocalExecutionEvent): void {
    if (event.kind === "closed") {
      const { name, status, error } = event.execution;
      return this.add(name, `execution ${name} closed ${status}${error ? ` ${error}` : ""}`);
    }
    const engine = event.event as { type?: string; state?: { name?: string }; Error?: string; error?: string };
    const name = event.executionArn.split(":").pop() ?? "";
    this.add(event.executionArn, `execution ${name} ${engine.type ?? "?"} ${engine.state?.name ?? ""}${engine.Error ?? engine.error ? ` ${engine.Error ?? engine.error}` : ""}`);
  }

  private async invocation<R>(key: string, invoke: () => Promise<R>): Promise<R> {
    const started = Date.now();
    try {
      const result = await invoke();
      if (key === "sweeper") this.addShared(started, `sweeper tick (${((Date.now() - started) / 1000).toFixed(1)} s)`);
      return result;
    } catch (error) {
      const name = (error as { errorType?: string; name?: string }).errorType ?? (error as Error).name ?? "Error";
      this.addShared(started, `${key} invocation failed after ${((Date.now() - started) / 1000).toFixed(1)} s: ${name}`);
      throw error;
    }
  }

  private addShared(at: number, text: string): void {
    this.shared.push({ at, text });
    if (this.shared.length > 2 * MAX_SHARED) this.shared = this.shared.slice(-MAX_SHARED);
  }

  private add(source: string, text: string): void {
    const at = Date.now();
    const keys = new Set([...(source.match(RUN_ID) ?? []), ...(source.match(SESSION_KEY) ?? [])]);
    for (const key of keys) {
      const list = this.lines.get(key) ?? [];
      list.push({ at, text });
      this.lines.set(key, list);
    }
  }
}

/** Which item a DynamoDB call touches (its key's pk/sk), so a lane write reads as one. */
function keyDetail(body: string): string {
  const key = /"Key":\{"pk":\{"S":"([^"]{0,80})"\},"sk":\{"S":"([^"]{0,60})"\}/.exec(body) ?? /"pk":\{"S":"([^"]{0,80})"\},"sk":\{"S":"([^"]{0,60})"\}/.exec(body);
  return key ? ` ${key[1].replace(RUN_ID, "<run>")}/${key[2].replace(RUN_ID, "<run>")}` : "";
}

function errorName(body: Buffer): string {
  const text = body.toString("utf8").slice(0, 300);
  return /"__type":"(?:[^"#]*#)?([^"]+)"/.exec(text)?.[1] ?? /<Code>([^<]+)/.exec(text)?.[1] ?? "";
}
