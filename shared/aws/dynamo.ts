import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";

/** True when a write failed only because its condition did not hold. */
export function isConditionFailure(error: unknown): boolean {
  return (
    error instanceof ConditionalCheckFailedException ||
    (error as { name?: string } | undefined)?.name === "ConditionalCheckFailedException"
  );
}

/** Runs a conditional write; resolves false (instead of throwing) when the condition fails. */
export async function conditionally(write: () => Promise<unknown>): Promise<boolean> {
  try {
    await write();
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/** Treat items whose TTL has passed as absent: AWS deletes late, the local emulator never. */
export function isExpired(item: { expiresAt?: number } | undefined, nowMs: number): boolean {
  return item?.expiresAt !== undefined && item.expiresAt * 1000 <= nowMs;
}

export function byteSize(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value), "utf8");
}

import type { DocumentClient } from "./document-client";

/** What every repository needs: the document client, the table and a clock. */
export interface Db {
  doc: DocumentClient;
  table: string;
  now(): number;
}
