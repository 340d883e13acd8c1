import * as z from "zod";

/**
 * A run id as callers send it back (path segment, `runId` param). Ours are
 * `run_` + base64url (shared/core/ids.ts) and double as Step Functions
 * execution names (<= 80 chars of [A-Za-z0-9-_]); anything else cannot name a
 * run, and an unbounded one would pass DynamoDB's 2048-byte key limit (a 500
 * from the table instead of a 400 from us).
 */
export const RunIdSchema = z.lazy(() => z
  .string()
  .min(1)
  .max(80)
  .regex(/^[A-Za-z0-9_-]+$/, "runId may contain letters, digits, _ and -"));
