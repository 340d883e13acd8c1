/**
 * The fault-injection layer of the local stack (issue 16): off unless a test
 * passes a FaultPlan to startLocalStack. Two places see every boundary:
 * - the AWS edge sees every SDK call a function makes (DynamoDB, SQS,
 *   Step Functions, Lambda, the Management API): a rule answers it with the
 *   service's own throttling / status error (the real SDK then retries or
 *   raises what it raises in AWS), or kills the calling function's running
 *   sandboxes right before or right after the call reaches the emulator (a
 *   Lambda dying before or after a durable write), or runs it past its timeout;
 * - the invocation wrapper sees every invocation (API Gateway, the SQS poller,
 *   Step Functions tasks, rules, and the Lambda Invoke API a function calls):
 *   a rule refuses it as Lambda does when throttled (TooManyRequestsException;
 *   a task then sees Lambda.TooManyRequestsException), or crashes it or runs
 *   it past its timeout before its first call.
 * - the local Step Functions sees each Task state its executions enter: a
 *   rule fails the execution there with States.Runtime (the service's own
 *   failure) or loses it (as if deleted: no event, no record), the Task's
 *   function not invoked.
 * - mid-Task, an edge rule's `execution` effect kills a named execution right
 *   after a call of the function running its Task reached the emulator (the
 *   call's write happened): the execution FAILS with States.Runtime or is
 *   lost, and the function goes on as a Lambda does in AWS; its late answer
 *   reaches no one. "When the attempt writes X (the n-th time), the
 *   execution dies": triggered by the attempt's own progress, never a delay.
 * Each rule fires `times` times (default 1) and records its hits.
 */
import type { WireError } from "./aws-edge/wire-errors";
import { coralError } from "./aws-edge/wire-errors";
import { LambdaFunctionError, LambdaServiceError } from "./lambda-context";
import type { TaskFault } from "./step-functions";

export type FaultEffect =
  /** The service's throttling answer (DynamoDB ThrottlingException / ProvisionedThroughputExceededException, SQS, Step Functions, Lambda TooManyRequestsException). */
  | { kind: "throttle"; code?: string }
  /** A bare HTTP status with an error type (the Management API's 429, 500, 410 GoneException). */
  | { kind: "status"; statusCode: number; errorType: string }
  /** The calling function dies: before its call reaches the emulator, or after (the write happened, the answer is lost). */
  | { kind: "kill"; when: "before" | "after" }
  /** The calling function runs past its timeout right after this call (Sandbox.Timedout). */
  | { kind: "timeout" }
  /** Right after this call, the execution named `executionName` dies mid-Task (States.Runtime or lost); the caller goes on. */
  | { kind: "execution"; fault: TaskFault; executionName: string };

export interface EdgeFaultRule {
  at: "edge";
  /** Function key of the caller (the template's tag, e.g. "run-finalize"); any caller when absent. */
  caller?: string;
  /** The edge's IAM action, e.g. "dynamodb:UpdateItem", "execute-api:ManageConnections". */
  action: string;
  /** Only calls whose request body contains this text (every one of these texts). */
  bodyIncludes?: string | string[];
  effect: FaultEffect;
  times?: number;
}

export interface InvokeFaultRule {
  at: "invoke";
  /** Function key of the invoked function. */
  function: string;
  /**
   * throttle: Lambda refuses it (TooManyRequestsException); crash: the function
   * dies before its first call (Runtime.ExitError); timeout: it runs past its
   * timeout before its first call (Sandbox.Timedout). For functions that make no
   * AWS call on the way (decide's recovery is pure) these are the only faults.
   */
  effect: { kind: "throttle" } | { kind: "crash" } | { kind: "timeout" };
  /** Only invocations whose event (as JSON) contains this text (every one of these texts), e.g. ws-api's post-connect step. */
  eventIncludes?: string | string[];
  times?: number;
}

export interface ExecutionFaultRule {
  at: "execution";
  /** The Task state whose entry the fault hits (infra/state-machine.ts STATE_NAMES, e.g. "Attempt"). */
  state: string;
  /** Only executions with this name (a run's first is named by its run id; re-drives `<runId>-r<n>`). */
  executionName?: string;
  effect: { kind: TaskFault };
  times?: number;
}

export type FaultRule = EdgeFaultRule | InvokeFaultRule | ExecutionFaultRule;

export interface FaultHit {
  rule: FaultRule;
  detail: string;
}

/** What the edge does with one call. */
export type EdgeFault =
  | { kind: "refuse"; error: WireError }
  | { kind: "kill-before" }
  | { kind: "kill-after" }
  | { kind: "timeout-after" }
  | { kind: "execution-after"; fault: TaskFault; executionName: string };

interface Armed {
  rule: FaultRule;
  left: number;
}

export class FaultPlan {
  private armed: Armed[] = [];
  readonly hits: FaultHit[] = [];

  add(...rules: FaultRule[]): this {
    for (const rule of rules) this.armed.push({ rule, left: rule.times ?? 1 });
    return this;
  }

  clear(): void {
    this.armed = [];
  }

  /** Rules not fired yet (a test usually expects 0: its fault really happened). */
  get pending(): number {
    return this.armed.filter((armed) => armed.left > 0).length;
  }

  /** The edge asks for each call of a function (`caller` = its key). */
  edgeFault(call: { service: string; action: string; caller: string | undefined; body: Buffer }): EdgeFault | undefined {
    const armed = this.take((rule) => rule.at === "edge" && rule.action === call.action && (rule.caller === undefined || rule.caller === call.caller) && bodyMatches(rule.bodyIncludes, call.body), `${call.caller ?? "?"} ${call.action}`);
    if (!armed || armed.at !== "edge") return undefined;
    const { effect } = armed;
    if (effect.kind === "kill") return { kind: effect.when === "before" ? "kill-before" : "kill-after" };
    if (effect.kind === "timeout") return { kind: "timeout-after" };
    if (effect.kind === "execution") return { kind: "execution-after", fault: effect.fault, executionName: effect.executionName };
    if (effect.kind === "status") return { kind: "refuse", error: statusError(effect.statusCode, effect.errorType) };
    return { kind: "refuse", error: throttleError(call.service, effect.code) };
  }

  /** The invocation wrapper asks before each invocation of a function; `eventText` is read only for a rule that looks at the event. */
  invokeFault(functionKey: string, eventText?: () => string): Error | undefined {
    const armed = this.take(
      (rule) => rule.at === "invoke" && rule.function === functionKey && (rule.eventIncludes === undefined || textIncludes(rule.eventIncludes, eventText?.() ?? "")),
      `invoke ${functionKey}`,
    );
    if (!armed || armed.at !== "invoke") return undefined;
    if (armed.effect.kind === "crash") return new LambdaFunctionError({ errorType: "Runtime.ExitError", errorMessage: "RequestId: fault injected: Runtime exited with error: signal: killed" });
    if (armed.effect.kind === "timeout") return new LambdaFunctionError({ errorType: "Sandbox.Timedout", errorMessage: "RequestId: fault injected: Task timed out" });
    return new LambdaServiceError("TooManyRequestsException", "Rate Exceeded.");
  }

  /** The local Step Functions asks as an execution enters a Task state. */
  executionFault(task: { name: string; state: string }): TaskFault | undefined {
    const armed = this.take((rule) => rule.at === "execution" && rule.state === task.state && (rule.executionName === undefined || rule.executionName === task.name), `${task.name} entering ${task.state}`);
    return armed?.at === "execution" ? armed.effect.kind : undefined;
  }

  private take(matches: (rule: FaultRule) => boolean, detail: string): FaultRule | undefined {
    const armed = this.armed.find((candidate) => candidate.left > 0 && matches(candidate.rule));
    if (!armed) return undefined;
    armed.left -= 1;
    this.hits.push({ rule: armed.rule, detail });
    return armed.rule;
  }
}

function bodyMatches(includes: string | string[] | undefined, body: Buffer): boolean {
  return includes === undefined || textIncludes(includes, body.toString("utf8"));
}

function textIncludes(includes: string | string[], text: string): boolean {
  return (Array.isArray(includes) ? includes : [includes]).every((part) => text.includes(part));
}

const THROTTLE_CODES: Record<string, { status: number; code: string; message: string }> = {
  dynamodb: { status: 400, code: "ThrottlingException", message: "Rate of requests exceeds the allowed throughput." },
  states: { status: 400, code: "ThrottlingException", message: "Rate exceeded" },
  sqs: { status: 400, code: "ThrottlingException", message: "Rate exceeded" },
  secretsmanager: { status: 400, code: "ThrottlingException", message: "Rate exceeded" },
  lambda: { status: 429, code: "TooManyRequestsException", message: "Rate Exceeded." },
  "execute-api": { status: 429, code: "LimitExceededException", message: "Rate exceeded" },
};

function throttleError(service: string, code: string | undefined): WireError {
  const known = THROTTLE_CODES[service] ?? { status: 400, code: "ThrottlingException", message: "Rate exceeded" };
  const error = coralError(service, known.status, code ?? known.code, known.message);
  // SQS's JSON protocol names the query-compatible code too (the SDK reads it).
  if (service === "sqs") return { ...error, headers: { ...error.headers, "x-amzn-query-error": "ThrottlingException;Sender" } };
  return error;
}

function statusError(statusCode: number, errorType: string): WireError {
  return {
    statusCode,
    headers: { "content-type": "application/json", "x-amzn-errortype": errorType },
    body: Buffer.from(JSON.stringify({ message: errorType })),
  };
}
