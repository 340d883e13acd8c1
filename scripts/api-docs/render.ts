import { fileURLToPath } from "node:url";
import { buildOpenApiDocument } from "./openapi";
import { buildWsSchemas } from "./ws-schemas";

export const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

const text = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

/** The exact text of every checked-in API document. */
export function renderApiDocuments(): { openapi: string; schemas: Record<string, string> } {
  const schemas = Object.fromEntries(Object.entries(buildWsSchemas()).map(([file, schema]) => [file, text(schema)]));
  return { openapi: text(buildOpenApiDocument()), schemas };
}
