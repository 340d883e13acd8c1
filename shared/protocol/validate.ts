import * as z from "zod";
import { isTooLarge, MAX_MESSAGE_BYTES } from "./agent-request";
import { ApiError } from "./errors";

/** zod parse that maps failures to precise API errors (413 for size, else 400 listing the fields). */
export function validate<T>(schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  if (isTooLarge(parsed.error)) throw new ApiError("PAYLOAD_TOO_LARGE", `message exceeds ${MAX_MESSAGE_BYTES} bytes`);
  throw new ApiError("INVALID_REQUEST", z.prettifyError(parsed.error), {
    issues: parsed.error.issues.map((issue) => ({ path: issue.path.join("."), message: issue.message })),
  });
}

