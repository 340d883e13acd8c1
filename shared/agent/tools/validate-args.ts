import * as z from "zod";

/**
 * Argument validation against the tool's JSON Schema, before the tool runs.
 * zod converts the schema once per tool (cached by schema object); a schema
 * zod cannot convert is not enforced (the tool still validates its own input)
 * rather than making the tool unusable.
 */
const compiled = new WeakMap<object, z.ZodType | null>();

function compile(schema: Record<string, unknown>): z.ZodType | null {
  let validator = compiled.get(schema);
  if (validator === undefined) {
    try {
      validator = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
    } catch {
      validator = null;
    }
    compiled.set(schema, validator);
  }
  return validator;
}

export type ArgsCheck = { ok: true } | { ok: false; message: string };

export function validateToolArgs(schema: Record<string, unknown>, args: Record<string, unknown>): ArgsCheck {
  if (typeof args._raw === "string" && Object.keys(args).length === 1) {
    return { ok: false, message: `the arguments are not valid JSON: ${args._raw.slice(0, 200)}` };
  }
  const validator = compile(schema);
  if (!validator) return { ok: true };
  const parsed = validator.safeParse(args);
  if (parsed.success) return { ok: true };
  const issues = parsed.error.issues.slice(0, 5).map((issue) => `${issue.path.join(".") || "(arguments)"}: ${issue.message}`);
  return { ok: false, message: `invalid arguments: ${issues.join("; ")}` };
}
