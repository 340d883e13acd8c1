/**
 * Fakes as code for the lane tests: a Step Functions stand-in with
 * StartExecution's name idempotency, a queue that records what intake sends,
 * and a Db wrapper that "kills the Lambda" before its k-th write.
 */
import type { SQSRecord } from "aws-lambda";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DeleteCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { documentClient, type DocumentClient } from "../../shared/aws/document-client";
import { ensureTable, startLocalDynamo, type LocalDynamo } from "../../infra/local/dynamo";
import type { Db } from "../../shared/aws/dynamo";
import type { ExecutionState, RunExecutions } from "../../shared/aws/executions";
import type { FramePusher } from "../../shared/aws/push";
import type { RunQueue } from "../../shared/aws/run-queue";
import { AgentConfigSchema, type AgentConfig } from "../../shared/config/config";
import type { RunDeps } from "../../shared/run/deps";
import { silentLog } from "../../shared/run/deps";

export function testConfig(lanes: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): AgentConfig {
  return AgentConfigSchema.parse({ lanes, ...extra });
}

/** StartExecution semantics that matter here: one execution per name, a repeat is harmless. */
export class FakeExecutions implements RunExecutions {
  /** Names in the order their execution was created (never twice). */
  readonly created: string[] = [];
  /** Every start call, repeats included. */
  calls = 0;
  readonly states = new Map<string, ExecutionState>();
  /** When each execution was created, on `clock` (a test that moves its table's clock sets it to that clock). */
  readonly startedAt = new Map<string, number>();
  clock: () => number = Date.now;
  failNext = 0;

  async start(runId: string): Promise<{ executionArn?: string; alreadyStarted: boolean }> {
    this.calls += 1;
    if (this.failNext > 0) {
      this.failNext -= 1;
      throw Object.assign(new Error("injected StartExecution failure"), { name: "InjectedFault" });
    }
    const executionArn = `arn:aws:states:us-east-1:000000000000:execution:m:${runId}`;
    // AWS: a repeated start of a running execution (same name, same input) answers with its ARN.
    if (this.created.includes(runId)) return this.states.get(runId)?.status === "RUNNING" ? { executionArn, alreadyStarted: false } : { alreadyStarted: true };
    this.created.push(runId);
    this.startedAt.set(runId, this.clock());
    this.states.set(runId, { status: "RUNNING" });
    return { executionArn, alreadyStarted: false };
  }

  async describe(nameOrArn: string): Promise<ExecutionState | undefined> {
    return this.states.get(nameOrArn.split(":").pop() ?? nameOrArn);
  }
}

export class RecordingQueue implements RunQueue {
  readonly sent: { runId: string; sessionKey: string }[] = [];
  async send(message: { runId: string; sessionKey: string }): Promise<void> {
    this.sent.push(message);
  }
}

export const nullPusher: FramePusher = { push: async () => "gone", disconnect: async () => undefined };

export function runDeps(db: Db, config: AgentConfig, executions = new FakeExecutions()): RunDeps & { executions: FakeExecutions } {
  return { db, config, executions, pusher: nullPusher, log: silentLog };
}

export class InjectedCrash extends Error {
  override readonly name = "InjectedCrash";
}

const WRITES = [PutCommand, UpdateCommand, DeleteCommand];

/**
 * The same table, but the process "dies" right before its `crashAt`-th
 * write (1-based): that write and everything after it never happen. Counts
 * writes so a test can first measure how many a path makes.
 */
export function crashingDb(db: Db, crashAt: number): Db & { writes: () => number } {
  let writes = 0;
  const doc = new Proxy(db.doc, {
    get(target, prop, receiver) {
      if (prop !== "send") return Reflect.get(target, prop, receiver);
      return async (command: unknown, ...rest: unknown[]) => {
        if (WRITES.some((type) => command instanceof type)) {
          writes += 1;
          if (writes === crashAt) throw new InjectedCrash(`crash before write ${crashAt}`);
        }
        return (target.send as (...args: unknown[]) => Promise<unknown>)(command, ...rest);
      };
    },
  });
  return { ...db, doc, writes: () => writes };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One dynalite, a fresh table per case: crash-point loops need a clean world per crash point. */
export class Tables {
  private counter = 0;
  private constructor(private readonly dynamo: LocalDynamo, private readonly client: DynamoDBClient, private readonly doc: DocumentClient) {}

  static async start(): Promise<Tables> {
    const dynamo = await startLocalDynamo();
    const client = new DynamoDBClient({ region: "us-east-1", endpoint: dynamo.endpoint, credentials: { accessKeyId: "local", secretAccessKey: "local" } });
    return new Tables(dynamo, client, documentClient(client, { removeUndefinedValues: true }));
  }

  /** A new empty table; `offset` moves its clock. */
  async fresh(): Promise<Db & { advance(ms: number): void }> {
    const table = `lanes-${++this.counter}`;
    await ensureTable(this.client, table);
    let offset = 0;
    return { doc: this.doc, table, now: () => Date.now() + offset, advance: (ms) => void (offset += ms) };
  }

  async close(): Promise<void> {
    this.client.destroy();
    await this.dynamo.close();
  }
}

/** An SQS FIFO record of the run queue, as the dispatcher's event source hands it over. */
export function sqsRecord(messageId: string, group: string, body: string): SQSRecord {
  return {
    messageId,
    receiptHandle: `rh-${messageId}`,
    body,
    attributes: {
      ApproximateReceiveCount: "1",
      SentTimestamp: "0",
      SenderId: "local",
      ApproximateFirstReceiveTimestamp: "0",
      MessageGroupId: group,
      MessageDeduplicationId: messageId,
    },
    messageAttributes: {},
    md5OfBody: "",
    eventSource: "aws:sqs",
    eventSourceARN: "arn:aws:sqs:us-east-1:000000000000:runs.fifo",
    awsRegion: "us-east-1",
  };
}
