import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import * as z from "zod";
import { parseSkill, type Workspace, type WorkspaceSource } from "../agent/prompt/workspace";
import { BOOTSTRAP_FILE_NAMES } from "../agent/prompt/workspace";
import { byteSize, type Db } from "./dynamo";
import { keys, MAX_ITEM_BYTES } from "./keys";
import { ItemTooLargeError } from "./errors";

/**
 * The workspace in the table: how bootstrap files and skills reach the
 * attempt Lambda in AWS (no S3, no redeploy). One item, `WORKSPACE#default`:
 *   { v: 1, files: { "AGENTS.md": "...", "SOUL.md": "..." }, skills: { "<name>": "<SKILL.md>" } }
 * Written by an operator (putWorkspace, or `aws dynamodb put-item`: see
 * docs/attempt.md), read with one GetItem at the start of every attempt.
 */
export const DEFAULT_WORKSPACE = "default";

const WorkspaceItemSchema = z.lazy(() => z.object({
  v: z.literal(1),
  files: z.record(z.string(), z.string()).default({}),
  skills: z.record(z.string(), z.string()).default({}),
  updatedAt: z.number().optional(),
}));

export async function putWorkspace(
  db: Db,
  content: { files?: Record<string, string>; skills?: Record<string, string> },
  name = DEFAULT_WORKSPACE,
): Promise<void> {
  const item = { ...keys.workspace(name), v: 1, files: content.files ?? {}, skills: content.skills ?? {}, updatedAt: db.now() };
  if (byteSize(item) > MAX_ITEM_BYTES - 1024) throw new ItemTooLargeError(`workspace ${name} is ${byteSize(item)} bytes; keep it under 399 KB`);
  await db.doc.send(new PutCommand({ TableName: db.table, Item: item }));
}

export function createTableWorkspaceSource(db: Db, name = DEFAULT_WORKSPACE): WorkspaceSource {
  return {
    kind: "table",
    async load(): Promise<Workspace> {
      const out = await db.doc.send(new GetCommand({ TableName: db.table, Key: keys.workspace(name) }));
      if (!out.Item) return { files: [], skills: [] };
      const { pk: _pk, sk: _sk, ...rest } = out.Item;
      const item = WorkspaceItemSchema.parse(rest);
      // Known bootstrap files in their fixed order; anything else in `files` is ignored.
      const files = BOOTSTRAP_FILE_NAMES.flatMap((fileName) => (item.files[fileName] !== undefined ? [{ name: fileName, content: item.files[fileName] }] : []));
      const skills = Object.keys(item.skills)
        .sort()
        .map((skillName) => parseSkill(skillName, item.skills[skillName]));
      return { files, skills };
    },
  };
}
