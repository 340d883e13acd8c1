import type { z } from "zod";
import { validate } from "../../shared/http/rest";
import { SessionKeySchema } from "../../shared/protocol/agent-request";
import { ApiError } from "../../shared/protocol/errors";
import { RunIdSchema } from "../../shared/protocol/ids";

/** Every named group a REST route pattern may have, with what its value must be. */
const PATH_PARAM_SCHEMAS: Record<string, z.ZodType<string>> = {
  runId: RunIdSchema,
  sessionKey: SessionKeySchema,
};

/**
 * A route's path parameters, percent-decoded and validated: a malformed
 * escape (`/v1/runs/%ZZ`) or an id no run or session can have (past
 * DynamoDB's key limit, say) is a 400 here, never a URIError or a table
 * error later.
 */
export function pathParams(groups: Record<string, string | undefined>): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [name, raw] of Object.entries(groups)) {
    if (raw === undefined) continue;
    const decoded = decodeSegment(name, raw);
    const schema = Object.hasOwn(PATH_PARAM_SCHEMAS, name) ? PATH_PARAM_SCHEMAS[name] : undefined;
    params[name] = schema ? validate(schema, decoded) : decoded;
  }
  return params;
}

function decodeSegment(name: string, raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new ApiError("INVALID_REQUEST", `path parameter ${name} has a malformed percent-encoding`);
  }
}
