/**
 * Task states mapped to in-process handlers invoked like Lambda.
 *
 * Two integrations, as Step Functions has them:
 * - a Lambda function ARN as `Resource`: the state input (after Parameters)
 *   is the event; the function's result is the task result;
 * - the optimised `arn:aws:states:::lambda:invoke`: Parameters carry
 *   `FunctionName` and `Payload`; the result is wrapped as
 *   `{ ExecutedVersion, Payload, SdkHttpMetadata, SdkResponseMetadata, StatusCode }`;
 * - `arn:aws:states:::lambda:invoke.waitForTaskToken`: the same invocation
 *   with `$$.Task.Token` in the Payload; the function's answer is ignored and
 *   the task waits for SendTaskSuccess / SendTaskFailure (./task-tokens.ts).
 *
 * Errors reach Retry/Catch as Step Functions reports them: a function error
 * is named by its errorType with the runtime's JSON payload as Cause
 * (`{"errorType","errorMessage","trace"}`); a Lambda service refusal is
 * `Lambda.<Exception>`; anything else is `States.TaskFailed`.
 */
import { randomUUID } from "node:crypto";
import type { Context } from "aws-lambda";
import {
  invokeLikeLambda,
  LAMBDA_DEFAULT_TIMEOUT_MS,
  LambdaFunctionError,
  LambdaServiceError,
} from "../lambda-context";
import { lambdaFunctionName } from "./arns";
import { taskStates } from "./definition";
import { STATES_TASK_FAILED, StatesTaskError } from "./errors";
import { assertTaskInputWithinLimit, assertTaskResultWithinLimit } from "./limits";
import { withTaskToken, type TaskTokenRegistry } from "./task-tokens";

export type TaskHandler = (input: unknown, context: Context) => Promise<unknown>;

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** What the library calls instead of the Task's Resource, keyed by state name. */
export type TaskOverride = (input: JsonValue) => Promise<JsonValue>;

export interface TaskBindingOptions {
  taskHandlers: Record<string, TaskHandler>;
  /** Lambda function timeouts by function ARN; Lambda's 3 s default otherwise. */
  taskTimeoutsMs?: Record<string, number>;
  region: string;
  accountId: string;
  /** Registers an in-flight invocation so that idleness can wait for it. */
  track: <T>(work: Promise<T>) => Promise<T>;
  /** Where `.waitForTaskToken` tasks wait for their answer (none: such tasks are refused at registration). */
  tokens?: TaskTokenRegistry;
  /** The machine the tasks belong to: its tokens name it, so IAM can authorize SendTask* against it as AWS does. */
  stateMachineArn?: string;
}

interface LocalFunction {
  arn: string;
  name: string;
  handler: TaskHandler;
  timeoutMs: number;
}

const LAMBDA_INVOKE_RESOURCE = /^arn:aws[a-z-]*:states:::lambda:invoke$/;
const LAMBDA_INVOKE_WAIT_RESOURCE = /^arn:aws[a-z-]*:states:::lambda:invoke\.waitForTaskToken$/;
const SERVICE_INTEGRATION_RESOURCE = /^arn:aws[a-z-]*:states:::/;

/** Builds the library's `taskResourceLocalHandlers`; throws on a Task it cannot serve. */
export function bindTaskHandlers(definition: object, options: TaskBindingOptions): Record<string, TaskOverride> {
  const functions = localFunctions(options);
  const overrides: Record<string, TaskOverride> = {};
  for (const { stateName, resource, heartbeatSeconds } of taskStates(definition)) {
    overrides[stateName] =
      LAMBDA_INVOKE_WAIT_RESOURCE.test(resource) && options.tokens
        ? waitForTaskTokenTask(resource, functions, options, options.tokens, heartbeatSeconds)
        : bindTask(stateName, resource, functions, options);
  }
  return overrides;
}

function bindTask(
  stateName: string,
  resource: string,
  functions: LocalFunction[],
  options: TaskBindingOptions,
): TaskOverride {
  if (LAMBDA_INVOKE_RESOURCE.test(resource)) return lambdaInvokeTask(resource, functions, options);
  if (SERVICE_INTEGRATION_RESOURCE.test(resource)) {
    throw new Error(`Task '${stateName}': integration '${resource}' is not supported by the local Step Functions`);
  }
  const fn = findFunction(resource, functions);
  if (!fn) throw new Error(`Task '${stateName}': no local handler for Resource '${resource}'`);
  return directLambdaTask(fn, options);
}

function localFunctions(options: TaskBindingOptions): LocalFunction[] {
  return Object.entries(options.taskHandlers).map(([arn, handler]) => ({
    arn,
    name: lambdaFunctionName(arn),
    handler,
    timeoutMs: options.taskTimeoutsMs?.[arn] ?? LAMBDA_DEFAULT_TIMEOUT_MS,
  }));
}

/** Exact ARN first; otherwise by function name, so qualified ARNs and bare names resolve too. */
function findFunction(nameOrArn: string, functions: LocalFunction[]): LocalFunction | undefined {
  const exact = functions.find((fn) => fn.arn === nameOrArn);
  if (exact) return exact;
  const name = lambdaFunctionName(nameOrArn);
  return functions.find((fn) => fn.name === name);
}

function directLambdaTask(fn: LocalFunction, options: TaskBindingOptions): TaskOverride {
  return async (input) => {
    assertTaskInputWithinLimit(input, fn.arn);
    const result = await invokeFunction(fn, input, options);
    assertTaskResultWithinLimit(result, fn.arn);
    return result as JsonValue;
  };
}

function lambdaInvokeTask(resource: string, functions: LocalFunction[], options: TaskBindingOptions): TaskOverride {
  return async (parameters) => {
    assertTaskInputWithinLimit(parameters, resource);
    const { FunctionName, Payload } = asParameters(parameters);
    const fn = typeof FunctionName === "string" ? findFunction(FunctionName, functions) : undefined;
    if (!fn) {
      throw new StatesTaskError("Lambda.ResourceNotFoundException", `Function not found: ${String(FunctionName)}`);
    }
    const result = await invokeFunction(fn, toInvokePayload(Payload), options);
    const output = lambdaInvokeOutput(result);
    assertTaskResultWithinLimit(output, resource);
    return output;
  };
}

/** Invokes the function with the token in its payload, then waits for the token's answer. */
function waitForTaskTokenTask(
  resource: string,
  functions: LocalFunction[],
  options: TaskBindingOptions,
  tokens: TaskTokenRegistry,
  heartbeatSeconds: number | undefined,
): TaskOverride {
  return async (parameters) => {
    assertTaskInputWithinLimit(parameters, resource);
    const { token, result } = tokens.issue(heartbeatSeconds, options.stateMachineArn);
    result.catch(() => undefined); // settled below, or never read when the invocation fails
    const { FunctionName, Payload } = asParameters(withTaskToken(parameters, token));
    const fn = typeof FunctionName === "string" ? findFunction(FunctionName, functions) : undefined;
    if (!fn) {
      tokens.abandon(token);
      throw new StatesTaskError("Lambda.ResourceNotFoundException", `Function not found: ${String(FunctionName)}`);
    }
    try {
      await invokeFunction(fn, toInvokePayload(Payload), options);
    } catch (error) {
      tokens.abandon(token);
      throw error;
    }
    const output = await result;
    assertTaskResultWithinLimit(output, resource);
    return output;
  };
}

function asParameters(value: JsonValue): { FunctionName?: JsonValue; Payload?: JsonValue } {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? value : {};
}

/** Step Functions sends a JSON string payload as that JSON; no payload as `{}`. */
function toInvokePayload(payload: JsonValue | undefined): unknown {
  if (payload === undefined) return {};
  if (typeof payload !== "string") return payload;
  try {
    return JSON.parse(payload);
  } catch {
    return payload;
  }
}

function lambdaInvokeOutput(payload: unknown): JsonValue {
  const requestId = randomUUID();
  const headers = {
    "Content-Type": "application/json",
    "X-Amz-Executed-Version": "$LATEST",
    "x-amzn-RequestId": requestId,
  };
  return {
    ExecutedVersion: "$LATEST",
    Payload: payload as JsonValue,
    SdkHttpMetadata: {
      AllHttpHeaders: Object.fromEntries(Object.entries(headers).map(([key, value]) => [key, [value]])),
      HttpHeaders: headers,
      HttpStatusCode: 200,
    },
    SdkResponseMetadata: { RequestId: requestId },
    StatusCode: 200,
  };
}

async function invokeFunction(fn: LocalFunction, payload: unknown, options: TaskBindingOptions): Promise<unknown> {
  try {
    return await options.track(
      invokeLikeLambda(fn.handler, payload, {
        functionName: fn.name,
        timeoutMs: fn.timeoutMs,
        region: options.region,
        accountId: options.accountId,
      }),
    );
  } catch (error) {
    throw toStatesTaskError(error);
  }
}

export function toStatesTaskError(error: unknown): StatesTaskError {
  if (error instanceof LambdaFunctionError) {
    return new StatesTaskError(error.payload.errorType, JSON.stringify(error.payload));
  }
  if (error instanceof LambdaServiceError) return new StatesTaskError(`Lambda.${error.name}`, error.message);
  return new StatesTaskError(STATES_TASK_FAILED, error instanceof Error ? error.message : String(error));
}
