/**
 * One table describing every Lambda of the runner: what it runs, how long it
 * may run, and exactly which permissions and environment it gets. The stack
 * builds functions and grants from this table only, and the local stack can
 * read the same timeouts. Pure data: no aws-cdk-lib import.
 */

import { RESERVED_CONCURRENCY } from "./throttling";

export { WS_METHOD_ROUTES, WS_ROUTE_KEYS, WS_ROUTE_SELECTION_EXPRESSION } from "./routes";

export const FUNCTION_KEYS = [
  "rest-api",
  "ws-api",
  "dispatcher",
  "attempt",
  "decide",
  "run-finalize",
  "sweeper",
  "openai-api",
  "authorizer",
] as const;

export type FunctionKey = (typeof FUNCTION_KEYS)[number];

/** DynamoDB item-level actions; a function never gets `dynamodb:*` or Scan. */
export type DynamoAction =
  | "GetItem"
  | "BatchGetItem"
  | "PutItem"
  | "UpdateItem"
  | "DeleteItem"
  | "Query"
  | "BatchWriteItem";

/** HTTP methods of the API Gateway Management API (`/@connections/{id}`). */
export type ManagementMethod = "POST" | "GET" | "DELETE";

/** SendTaskSuccess: answers a run's `.waitForTaskToken` pause (approvals, client tools; on the state machine). */
export type StatesAction = "StartExecution" | "DescribeExecution" | "StopExecution" | "SendTaskSuccess";

export interface FunctionSpec {
  readonly key: FunctionKey;
  /** Entry file, relative to the repository root. */
  readonly entry: string;
  readonly timeoutSeconds: number;
  readonly memoryMb: number;
  /** Item actions on the single table (env TABLE_NAME is always set). */
  readonly dynamodb: readonly DynamoAction[];
  /** Intake: env QUEUE_URL + AUTH_TOKEN_SHA256, sqs:SendMessage on the run queue. */
  readonly intake: boolean;
  /** Non-empty: env WS_MANAGEMENT_ENDPOINT + execute-api:ManageConnections on these methods. */
  readonly wsManagement: readonly ManagementMethod[];
  /** Non-empty: env STATE_MACHINE_ARN + these states:* actions. */
  readonly states: readonly StatesAction[];
  /** Env MODEL, provider base URLs, PROVIDER_KEYS_SECRET_ARN + read on that secret. */
  readonly providers: boolean;
  /** Channel bot tokens / signing secrets: env CHANNEL_SECRETS_ARN + read on that secret (when channels are configured). */
  readonly channelSecrets?: boolean;
  /** How the function is invoked besides API Gateway / Step Functions. */
  readonly trigger?: "run-queue" | "every-minute";
  /**
   * Also invoked by EventBridge when a run execution of the state machine
   * ends FAILED, TIMED_OUT or ABORTED (the sweeper ends that run and hands
   * its lane on within seconds, not at the next scheduled sweep).
   */
  readonly onExecutionEnded?: boolean;
  /** Env AUTH_TOKEN_SHA256 without being an intake (the API authorizer). */
  readonly authToken?: boolean;
  /**
   * Reserved concurrency: a cap for the front doors (a flood of requests
   * cannot take every execution of the account's pool from running runs)
   * and a floor for the attempt (infra/throttling.ts has the numbers).
   */
  readonly reservedConcurrency?: number;
  /** lambda:InvokeFunction on itself (ws-api posts `connect.challenge` from an async self-invocation). */
  readonly selfInvoke?: boolean;
}

type SpecInput = Partial<Omit<FunctionSpec, "key" | "entry">> &
  Pick<FunctionSpec, "timeoutSeconds" | "dynamodb">;

function spec(key: FunctionKey, input: SpecInput): FunctionSpec {
  return {
    key,
    entry: `functions/${key}/handler.ts`,
    memoryMb: 512,
    intake: false,
    wsManagement: [],
    states: [],
    providers: false,
    ...input,
  };
}

// BatchGetItem: reads that are needed together go as one request (an admission's run, lane and
// session: shared/aws/read-together.ts); it reads nothing GetItem could not.
// DeleteItem: functions that push events drop connection items on
// GoneException, and every lane pump (dispatcher, run-finalize, sweeper)
// removes the lane-waiter item of the run it admits.
const READ_WRITE: readonly DynamoAction[] = ["GetItem", "BatchGetItem", "PutItem", "UpdateItem", "Query"];
const READ_WRITE_DELETE: readonly DynamoAction[] = [...READ_WRITE, "DeleteItem"];

export const FUNCTION_SPECS: Readonly<Record<FunctionKey, FunctionSpec>> = {
  // 29 s = API Gateway REST integration limit; waiting longer is pointless.
  // Aborting a run that has not started ends it here: announce it (POST) and hand its lane on (StartExecution).
  "rest-api": spec("rest-api", {
    timeoutSeconds: 29,
    dynamodb: READ_WRITE_DELETE,
    intake: true,
    wsManagement: ["POST"],
    // SendTaskSuccess: resolving an approval wakes the paused run.
    states: ["StartExecution", "SendTaskSuccess"],
    reservedConcurrency: RESERVED_CONCURRENCY["rest-api"],
    // Verifies channel webhook signatures (functions/rest-api/channel-routes.ts).
    channelSecrets: true,
  }),
  "ws-api": spec("ws-api", {
    timeoutSeconds: 60,
    dynamodb: READ_WRITE_DELETE,
    intake: true,
    // POST answers/replays, GET inspects, DELETE closes a connection that failed `connect`.
    wsManagement: ["POST", "GET", "DELETE"],
    states: ["StartExecution", "SendTaskSuccess"],
    selfInvoke: true,
    reservedConcurrency: RESERVED_CONCURRENCY["ws-api"],
    // chat.abort / runs.abort of a channel message that has not started, and a message its intake drops
    // for the queue cap, answer that chat (shared/channels/unstarted-reply.ts): the bot tokens.
    channelSecrets: true,
  }),
  dispatcher: spec("dispatcher", {
    timeoutSeconds: 30,
    dynamodb: READ_WRITE_DELETE,
    states: ["StartExecution"],
    trigger: "run-queue",
  }),
  // 900 s is Lambda's cap; the attempt yields before its deadline and the
  // state machine loops. 1024 MB mostly buys CPU for JSON-heavy streaming.
  attempt: spec("attempt", {
    timeoutSeconds: 900,
    memoryMb: 1024,
    dynamodb: [...READ_WRITE_DELETE, "BatchWriteItem"],
    wsManagement: ["POST"],
    // The hand-off to the loop machine (<execution>-l), and continue-as-new (<runId>-c<n>) from the loop head.
    states: ["StartExecution"],
    providers: true,
    reservedConcurrency: RESERVED_CONCURRENCY.attempt,
    // Streams channel replies as preview edits (shared/channels/preview.ts).
    channelSecrets: true,
  }),
  // Also the PauseForInput task: it parks the task token and, when the answer came first, sends it itself.
  // StartExecution: in the run machine, RecoverAttempt hands the run to the loop machine (shared/run/hand-off.ts).
  decide: spec("decide", { timeoutSeconds: 30, dynamodb: READ_WRITE_DELETE, wsManagement: ["POST"], states: ["StartExecution", "SendTaskSuccess"] }),
  // Starts the next queued run of the session lane when it hands the lane on.
  // Delivers channel replies (shared/channels/deliver.ts): bot tokens, hook secrets.
  "run-finalize": spec("run-finalize", {
    timeoutSeconds: 60,
    channelSecrets: true,
    dynamodb: READ_WRITE_DELETE,
    wsManagement: ["POST"],
    states: ["StartExecution"],
  }),
  // Stuck-run diagnostics, dead runs (it ends them: announce with POST, hand the lane on), leases, slots.
  sweeper: spec("sweeper", {
    timeoutSeconds: 120,
    dynamodb: READ_WRITE_DELETE,
    wsManagement: ["POST"],
    states: ["StartExecution", "DescribeExecution", "StopExecution"],
    trigger: "every-minute",
    onExecutionEnded: true,
    // A run it ends still answers its channel conversation (the error reply, through the delivery ledger).
    channelSecrets: true,
  }),
  // OpenAI-compatible API (docs/openai-api.md): a response-streaming integration may run 15 min,
  // so SSE follows a run that long; buffered answers still come within 25 s (else 202 + Location).
  "openai-api": spec("openai-api", {
    timeoutSeconds: 900,
    dynamodb: READ_WRITE_DELETE,
    intake: true,
    wsManagement: ["POST"],
    // Client tools (docs/openai-api.md): the next request's results wake the paused run, and one that
    // does not answer them aborts it, which wakes it too. (It only ever aborts paused runs: no lane hand-on.)
    states: ["SendTaskSuccess"],
  }),
  // REST REQUEST authorizer and WebSocket $connect authorizer: one GetItem per uncached key.
  authorizer: spec("authorizer", { timeoutSeconds: 10, memoryMb: 256, dynamodb: ["GetItem"], authToken: true, reservedConcurrency: RESERVED_CONCURRENCY.authorizer }),
};

/** Tag set on each AWS::Lambda::Function so tools map logical ids to keys. */
export const FUNCTION_KEY_TAG = "agent-runner:function";

/** POWERTOOLS_SERVICE_NAME of every function. */
export const SERVICE_NAME = "agent-runner";
