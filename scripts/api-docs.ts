/**
 * `npm run docs:api`: regenerates docs/openapi.json (REST, OpenAPI 3.1) and
 * docs/schemas/*.json (WebSocket frames, JSON Schema) from the zod schemas.
 * test/docs/api-documents.test.ts fails when the checked-in files are stale.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT, renderApiDocuments } from "./api-docs/render";

const rendered = renderApiDocuments();
const schemasDir = join(REPO_ROOT, "docs", "schemas");
mkdirSync(schemasDir, { recursive: true });
for (const file of readdirSync(schemasDir)) if (file.endsWith(".json") && !(file in rendered.schemas)) rmSync(join(schemasDir, file));
writeFileSync(join(REPO_ROOT, "docs", "openapi.json"), rendered.openapi);
for (const [file, text] of Object.entries(rendered.schemas)) writeFileSync(join(schemasDir, file), text);
console.log(`docs/openapi.json and ${Object.keys(rendered.schemas).length} files in docs/schemas/ written`);
