import type * as z from "zod";
import { validate } from "../../shared/http/rest";
import { SessionKeySchema } from "../../shared/protocol/agent-request";
import { RunIdSchema } from "../../shared/protocol/ids";

/** Every path parameter a REST route may have that must look like an id, with what its value must be. */
const PATH_PARAM_SCHEMAS: Record<string, z.ZodType<string>> = {
  runId: RunIdSchema,
  sessionKey: SessionKeySchema,
};

/**
 * A route's path parameters (percent-decoded by shared/http/router.ts),
 * validated: an id no run or session can have (past DynamoDB's key limit,
 * say) is a 400 here, never a table error later.
 */
export function pathParams(decoded: Record<string, string>): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [name, value] of Object.entries(decoded)) {
    const schema = Object.hasOwn(PATH_PARAM_SCHEMAS, name) ? PATH_PARAM_SCHEMAS[name] : undefined;
    params[name] = schema ? validate(schema, value) : value;
  }
  return params;
}
