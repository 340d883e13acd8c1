import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";

/**
 * The agent's workspace as the prompt sees it: bootstrap files and skills.
 *
 * Where it comes from in a serverless world (docs/attempt.md "Workspace"):
 * - locally, a directory (`workspace.dir`): `AGENTS.md`, `SOUL.md`, ... at its
 *   root and `skills/<name>/SKILL.md`, read at the start of every attempt, so
 *   an edit takes effect on the next attempt without a restart;
 * - in AWS, one item in the runner's table (`WORKSPACE#default`, see
 *   shared/aws/workspace.ts), read with one GetItem per attempt: no S3, no
 *   redeploy to change SOUL.md, and the caps below keep it far under 400 KB.
 */
export interface WorkspaceFile {
  name: string;
  content: string;
}

export interface Skill {
  name: string;
  description: string;
  /** The full SKILL.md, read on demand through the read_skill tool. */
  content: string;
}

export interface Workspace {
  files: WorkspaceFile[];
  skills: Skill[];
}

export interface WorkspaceSource {
  readonly kind: string;
  load(): Promise<Workspace>;
}

export const EMPTY_WORKSPACE: Workspace = Object.freeze({ files: [], skills: [] }) as Workspace;

/** Injected in this order; missing files are skipped. BOOTSTRAP.md only on a session's first run (./bootstrap.ts selectBootstrapFiles). */
export const BOOTSTRAP_FILE_NAMES = ["AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md", "BOOTSTRAP.md", "MEMORY.md"] as const;

export const emptyWorkspaceSource: WorkspaceSource = { kind: "none", load: async () => EMPTY_WORKSPACE };

export function createDirWorkspaceSource(dir: string): WorkspaceSource {
  return {
    kind: "dir",
    async load() {
      const files: WorkspaceFile[] = [];
      for (const name of BOOTSTRAP_FILE_NAMES) {
        const content = await readOptional(join(dir, name));
        if (content !== undefined) files.push({ name, content });
      }
      return { files, skills: await readSkills(join(dir, "skills")) };
    },
  };
}

async function readSkills(skillsDir: string): Promise<Skill[]> {
  let names: string[];
  try {
    names = (await readdir(skillsDir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name).sort();
  } catch {
    return [];
  }
  const skills: Skill[] = [];
  for (const name of names) {
    const text = await readOptional(join(skillsDir, name, "SKILL.md"));
    if (text !== undefined) skills.push(parseSkill(name, text));
  }
  return skills;
}

async function readOptional(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch {
    return undefined;
  }
}

/** SKILL.md: optional `---` front matter with `name:` and `description:`; else the first paragraph describes it. */
export function parseSkill(folderName: string, text: string): Skill {
  const front = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(text);
  const field = (key: string) => front?.[1].match(new RegExp(`^${key}:\\s*(.+)$`, "m"))?.[1].trim().replace(/^["']|["']$/g, "");
  const body = front ? text.slice(front[0].length) : text;
  const firstParagraph = body.split(/\r?\n\s*\r?\n/).map((p) => p.replace(/^#+\s*/, "").trim()).find((p) => p !== "") ?? "";
  return { name: field("name") ?? folderName, description: field("description") ?? firstParagraph.slice(0, 300), content: text };
}
