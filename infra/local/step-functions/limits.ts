/**
 * Step Functions' payload quota: 256 KiB of UTF-8 for an execution's input,
 * for each state's input and output, and for a task's result.
 */
import { StatesDataLimitExceededError } from "./errors";

export const STATE_PAYLOAD_LIMIT_BYTES = 256 * 1024;

export function jsonByteLength(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? "null", "utf8");
}

export function exceedsStateLimit(value: unknown): boolean {
  return jsonByteLength(value) > STATE_PAYLOAD_LIMIT_BYTES;
}

/** AWS's wording for a task whose result is over the quota. */
export function dataLimitCause(resource: string): string {
  return `The state/task '${resource}' returned a result with a size exceeding the maximum number of bytes service limit.`;
}

export function assertTaskResultWithinLimit(value: unknown, resource: string): void {
  if (exceedsStateLimit(value)) throw new StatesDataLimitExceededError(dataLimitCause(resource));
}

export function assertTaskInputWithinLimit(value: unknown, resource: string): void {
  if (exceedsStateLimit(value)) {
    throw new StatesDataLimitExceededError(
      `The input to the state/task '${resource}' has a size exceeding the maximum number of bytes service limit.`,
    );
  }
}
