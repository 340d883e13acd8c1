/**
 * The outer loop, black-box: the whole local stack (REST intake, SQS FIFO,
 * the real state machine on local Step Functions, the task Lambdas in
 * process, dynalite) against the fake OpenAI and Anthropic servers, with a
 * record of what each run did: states entered (= Step Functions
 * transitions), the decision of every Attempt / RecoverAttempt, its events
 * and its final record.
 *
 *   const loop = await startLoopStack(({ openai }) => ({ model: "openai/gpt-main", providers: { openai } }));
 *   loop.oai.enqueue(chat.error(429, ...), chat.text("hi"));
 *   const run = await loop.run("hello");
 *   expect(run.states).toEqual([...]); expect(run.decisions).toEqual([...]);
 *
 * Wait states do not really wait here (`waitStateMs`); the decisions still
 * say how long AWS would.
 */
import { DeleteCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { startLocalStack, type LocalStack } from "../../infra/local/stack";
import type { LocalExecutionEvent } from "../../infra/local/step-functions";
import { getRun, TERMINAL_STATUSES, type RunRecord } from "../../shared/aws/runs";
import { readEvents, type RunEvent } from "../../shared/aws/event-log";
import { AgentConfigSchema, type AgentConfig } from "../../shared/config/config";
import type { Decision } from "../../shared/core/run-loop";
import type { SdkMeter } from "../../shared/aws/metering";
import type { EdgeCall } from "../../infra/local/aws-edge";
import { FakeAnthropicServer } from "./fake-anthropic-server";
import { FakeOpenAIServer } from "./fake-openai-server";
import { RUN_END_TIMEOUT_MS } from "./timeouts";

export interface FakeProviders {
  /** `providers.openai` pointing at the fake OpenAI server. */
  openai: { baseURL: string; apiKey: string };
  anthropic: { baseURL: string; apiKey: string };
}

export interface RunTrace {
  runId: string;
  record: RunRecord;
  status: RunRecord["status"];
  /** States entered in order, over every execution of the run (continuations included). */
  states: string[];
  /** Executions the run used (more than one after a continue-as-new). */
  executions: string[];
  /** States entered per execution, in the order of `executions`. */
  executionStates: string[][];
  /** What each Attempt / RecoverAttempt decided, in order. */
  decisions: Decision[];
  events: RunEvent[];
  meta: Record<string, unknown>;
}

export interface LoopStack {
  stack: LocalStack;
  oai: FakeOpenAIServer;
  anthropic: FakeAnthropicServer;
  config: AgentConfig;
  /** `request`: more intake fields (model, thinking, timeoutSeconds, ...). */
  run(message: string, opts?: { sessionKey?: string; request?: Record<string, unknown> }): Promise<RunTrace>;
  /** Forgets every auth-profile cooldown (they are shared by all runs, on purpose). */
  clearProfileHealth(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The idle window of outer-loop stacks whose scenarios script a stall
 * (`chat.stall()`). A stalled fake stays silent until teardown, so the
 * watchdog is the only way out of it, however loaded the machine; every other
 * scripted reply only has to begin within the window, and 5 s is far beyond
 * any reply of the loopback fakes (1 s was not: on a loaded 2-core machine a
 * clean run became an idle retry). Stacks that never stall keep the default.
 */
export const STALL_IDLE_TIMEOUT_SECONDS = 5;

const DECIDING_STATES = new Set(["Attempt", "RecoverAttempt"]);

export async function startLoopStack(configure: (providers: FakeProviders) => Record<string, unknown>, options: { meter?: SdkMeter } = {}): Promise<LoopStack> {
  const oai = await FakeOpenAIServer.start();
  const anthropic = await FakeAnthropicServer.start();
  const providers: FakeProviders = {
    openai: { baseURL: oai.baseURL, apiKey: "sk-openai-test" },
    anthropic: { baseURL: anthropic.baseURL, apiKey: "sk-ant-test" },
  };
  const config = AgentConfigSchema.parse(configure(providers));
  const events: LocalExecutionEvent[] = [];
  const stack = await startLocalStack({
    config,
    waitStateMs: { WaitBeforeRetry: 0 },
    sweepIntervalMs: 0,
    observe: { onExecutionEvent: (event) => events.push(event), ...(options.meter ? meterAtTheEdge(options.meter) : {}) },
  });
  let sequence = 0;
  return {
    stack,
    oai,
    anthropic,
    config,
    async run(message, opts = {}) {
      sequence += 1;
      const sessionKey = opts.sessionKey ?? `loop-${sequence}-${Date.now()}`;
      const runId = await accept(stack, { ...opts.request, sessionKey, message });
      const record = await untilEnded(stack, runId, events);
      return traceOf(stack, runId, record, events);
    },
    async clearProfileHealth() {
      const { db } = stack.deps;
      for (const provider of ["openai", "anthropic"]) {
        const out = await db.doc.send(new QueryCommand({ TableName: db.table, KeyConditionExpression: "pk = :pk", ExpressionAttributeValues: { ":pk": `AUTH#${provider}` } }));
        for (const item of out.Items ?? []) await db.doc.send(new DeleteCommand({ TableName: db.table, Key: { pk: item.pk, sk: item.sk } }));
      }
    },
    async close() {
      await stack.close();
      await oai.close();
      await anthropic.close();
    },
  };
}

async function accept(stack: LocalStack, request: Record<string, unknown>): Promise<string> {
  const response = await fetch(`${stack.restUrl}/v1/agent`, {
    method: "POST",
    headers: { authorization: `Bearer ${stack.authToken}`, "content-type": "application/json" },
    body: JSON.stringify(request),
  });
  const body = (await response.json()) as { runId?: string };
  if (response.status !== 202 || !body.runId) throw new Error(`intake refused the run: ${response.status} ${JSON.stringify(body)}`);
  return body.runId;
}

/**
 * Until the run record is terminal and every execution of the run (the run
 * machine's, and the loop machine's it may have handed off to) has closed, so
 * every state event is in. Faster than `stack.idle()`, which also waits out
 * the SQS poller's long poll.
 */
async function untilEnded(stack: LocalStack, runId: string, events: LocalExecutionEvent[], timeoutMs = RUN_END_TIMEOUT_MS): Promise<RunRecord> {
  const deadline = Date.now() + timeoutMs;
  const allClosed = () => {
    const seen = new Set<string>();
    const closed = new Set<string>();
    for (const e of events) {
      const arn = e.kind === "state" ? e.executionArn : e.execution.executionArn;
      if (!executionNameOf(arn).startsWith(runId)) continue;
      seen.add(arn);
      if (e.kind === "closed") closed.add(arn);
    }
    return seen.size > 0 && [...seen].every((arn) => closed.has(arn));
  };
  for (;;) {
    const run = await getRun(stack.deps.db, runId);
    if (run && TERMINAL_STATUSES.has(run.status) && allClosed()) return run;
    if (Date.now() > deadline) throw new Error(`run ${runId} did not end within ${timeoutMs} ms (status ${run?.status})`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function traceOf(stack: LocalStack, runId: string, record: RunRecord, all: LocalExecutionEvent[]): Promise<RunTrace> {
  const mine = all.filter((e): e is Extract<LocalExecutionEvent, { kind: "state" }> => e.kind === "state" && executionNameOf(e.executionArn).startsWith(runId));
  const states: string[] = [];
  const decisions: Decision[] = [];
  const executions: string[] = [];
  for (const { event, executionArn } of mine) {
    if (!executions.includes(executionArn)) executions.push(executionArn);
    if (event.type === "StateEntered") states.push(event.state.name);
    if (event.type === "StateExited" && DECIDING_STATES.has(event.state.name)) {
      const output = event.state.output as { decision?: Decision } | undefined;
      if (output?.decision) decisions.push(output.decision);
    }
  }
  const executionStates = executions.map((arn) =>
    mine.filter((e) => e.executionArn === arn && e.event.type === "StateEntered").map((e) => e.event.type === "StateEntered" ? e.event.state.name : ""),
  );
  const events = await readEvents(stack.deps.db, runId, 0, 1000);
  return { runId, record, status: record.status, states, executions, executionStates, decisions, events, meta: (record.result?.meta ?? {}) as Record<string, unknown> };
}

function executionNameOf(executionArn: string): string {
  return executionArn.slice(executionArn.lastIndexOf(":") + 1);
}

/** Decisions as `action[:reason]` strings, e.g. `wait:same_model_rate_limit`, `compact:overflow`. */
export function decisionLabels(decisions: readonly Decision[]): string[] {
  return decisions.map((d) => {
    if (d.action === "compact") return `compact:${d.trigger}`;
    if (d.action === "finalize") return `finalize:${d.status}:${d.reason}`;
    if (d.action === "wait") return `wait:${d.waitSeconds}`;
    return d.action === "attempt" && d.reason ? `attempt:${d.reason}` : d.action;
  });
}

/** The functions' SDK calls, as the edge sees them (their clients live in other threads). */
export function meterAtTheEdge(meter: SdkMeter): { meterCapacity: true; onEdgeCall: (call: EdgeCall) => void } {
  return {
    meterCapacity: true,
    onEdgeCall: (call) => {
      if (call.principalArn?.includes(":assumed-role/")) meter.recordWire(call);
    },
  };
}
