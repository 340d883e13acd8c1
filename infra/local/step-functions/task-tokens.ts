/**
 * Task tokens of `.waitForTaskToken` tasks, as Step Functions has them: the
 * task hands its token to the function it invokes and waits, with no code
 * running, until someone calls SendTaskSuccess (the output becomes the task
 * result), SendTaskFailure (the task fails with that error and cause) or, when
 * the state sets HeartbeatSeconds, misses a SendTaskHeartbeat for that long
 * (States.HeartbeatTimeout). TimeoutSeconds(Path) is the library's, as for any
 * Task. aws-local-stepfunctions 3.0.0 has none of this (no task tokens, no
 * SendTask* operations), hence this module.
 */
import { randomBytes } from "node:crypto";
import { SfnApiError, STATES_HEARTBEAT_TIMEOUT, StatesTaskError } from "./errors";
import type { JsonValue } from "./tasks";

/** What the context object's `$$.Task.Token` holds until the task replaces it with the real token. */
export const TASK_TOKEN_PLACEHOLDER = "__local_sfn_task_token__";

/** AWS caps taskToken at 1024 characters; ours are 64 hex characters with a prefix. */
const MAX_TOKEN_LENGTH = 1024;

interface PendingTask {
  resolve(output: JsonValue): void;
  reject(error: Error): void;
  heartbeatMs?: number;
  heartbeatTimer?: NodeJS.Timeout;
}

/** The state machine a local token was issued for (the IAM edge authorizes SendTask* against it). */
export function stateMachineOfTaskToken(token: string): string | undefined {
  const match = /^local-task-token-([A-Za-z0-9_-]+)\.[0-9a-f]+$/.exec(token);
  return match ? Buffer.from(match[1], "base64url").toString() : undefined;
}

export class TaskTokenRegistry {
  private readonly pending = new Map<string, PendingTask>();
  /** Tokens that were answered or timed out: answering them again is TaskTimedOut, as in AWS. */
  private readonly closed = new Set<string>();

  /** A new token and the promise its answer settles. */
  issue(heartbeatSeconds?: number, stateMachineArn?: string): { token: string; result: Promise<JsonValue> } {
    const owner = stateMachineArn ? `${Buffer.from(stateMachineArn).toString("base64url")}.` : "";
    const token = `local-task-token-${owner}${randomBytes(32).toString("hex")}`;
    const result = new Promise<JsonValue>((resolve, reject) => {
      const entry: PendingTask = { resolve, reject, ...(heartbeatSeconds ? { heartbeatMs: heartbeatSeconds * 1000 } : {}) };
      this.pending.set(token, entry);
      this.armHeartbeat(token, entry);
    });
    return { token, result };
  }

  succeed(token: unknown, output: unknown): void {
    const entry = this.take(token);
    if (typeof output !== "string") throw new SfnApiError("InvalidOutput", "Invalid Output: 'output must be a JSON string'");
    let value: JsonValue;
    try {
      value = JSON.parse(output) as JsonValue;
    } catch (error) {
      this.pending.set(token as string, entry); // still waiting: the caller may try again
      throw new SfnApiError("InvalidOutput", `Invalid Output: '${(error as Error).message}'`);
    }
    this.settle(token as string, entry);
    entry.resolve(value);
  }

  fail(token: unknown, error: string | undefined, cause: string | undefined): void {
    const entry = this.take(token);
    this.settle(token as string, entry);
    entry.reject(new StatesTaskError(error ?? "", cause ?? ""));
  }

  heartbeat(token: unknown): void {
    const entry = this.take(token);
    this.pending.set(token as string, entry);
    this.armHeartbeat(token as string, entry);
  }

  /** The task stopped waiting (its execution ended, it timed out): its token is closed. */
  abandon(token: string): void {
    const entry = this.pending.get(token);
    if (entry) this.settle(token, entry);
  }

  private take(token: unknown): PendingTask {
    if (typeof token !== "string" || token.length === 0 || token.length > MAX_TOKEN_LENGTH) {
      throw new SfnApiError("InvalidToken", "Invalid Token: 'taskToken must be a non-empty string of at most 1024 characters'");
    }
    const entry = this.pending.get(token);
    if (entry) {
      this.pending.delete(token);
      return entry;
    }
    if (this.closed.has(token)) throw new SfnApiError("TaskTimedOut", "Task Timed Out: 'Provided task does not exist anymore'");
    throw new SfnApiError("InvalidToken", "Invalid Token: 'Invalid token'");
  }

  private settle(token: string, entry: PendingTask): void {
    clearTimeout(entry.heartbeatTimer);
    this.pending.delete(token);
    this.closed.add(token);
  }

  private armHeartbeat(token: string, entry: PendingTask): void {
    if (!entry.heartbeatMs) return;
    clearTimeout(entry.heartbeatTimer);
    entry.heartbeatTimer = setTimeout(() => {
      this.settle(token, entry);
      entry.reject(new StatesTaskError(STATES_HEARTBEAT_TIMEOUT, "The task did not send a heartbeat in time."));
    }, entry.heartbeatMs);
  }
}

/** Parameters with the placeholder token replaced by the real one, wherever `$$.Task.Token` put it. */
export function withTaskToken(value: JsonValue, token: string): JsonValue {
  if (value === TASK_TOKEN_PLACEHOLDER) return token;
  if (Array.isArray(value)) return value.map((item) => withTaskToken(item, token));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, withTaskToken(item, token)]));
  }
  return value;
}
