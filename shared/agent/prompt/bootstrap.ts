import type { PromptMode } from "../../config/prompt-config";
import type { WorkspaceFile } from "./workspace";

/**
 * Bootstrap files in the system prompt (reference §D.39): each file capped
 * at `perFileMaxChars` (default 20000), all of them at `totalMaxChars`
 * (default 60000). Truncation adds one generic notice, not one per file.
 * They form OpenClaw's `# Project Context` section, one `## <file>` each.
 */
export interface BootstrapCaps {
  perFileMaxChars: number;
  totalMaxChars: number;
}

export interface BootstrapContext {
  /** The prompt section; empty when there are no files. */
  text: string;
  files: { name: string; chars: number; originalChars: number }[];
  truncated: boolean;
}

export const BOOTSTRAP_TRUNCATION_NOTICE = "[Some workspace files were shortened to fit the prompt's size limits.]";
const SOUL_NOTE = "If SOUL.md is present, embody its persona and tone; follow its guidance unless higher-priority instructions override it.";

/**
 * Which files a run gets: BOOTSTRAP.md only on a session's first run (it
 * sets a brand-new workspace up); in `minimal` mode AGENTS.md only, as
 * OpenClaw gives sub-agents; none in `none` mode.
 */
export function selectBootstrapFiles(files: readonly WorkspaceFile[], options: { mode: PromptMode; firstRun: boolean }): WorkspaceFile[] {
  if (options.mode === "none") return [];
  if (options.mode === "minimal") return files.filter((file) => file.name === "AGENTS.md");
  return files.filter((file) => file.name !== "BOOTSTRAP.md" || options.firstRun);
}

export function buildBootstrapContext(files: readonly WorkspaceFile[], caps: BootstrapCaps): BootstrapContext {
  let remaining = caps.totalMaxChars;
  let truncated = false;
  const sections: string[] = [];
  const included: BootstrapContext["files"] = [];
  for (const file of files) {
    const content = file.content.trim();
    if (content === "") continue;
    const allowed = Math.min(caps.perFileMaxChars, remaining);
    if (allowed <= 0) {
      truncated = true;
      continue;
    }
    const kept = content.length > allowed ? content.slice(0, allowed) : content;
    truncated ||= kept.length < content.length;
    remaining -= kept.length;
    sections.push(`## ${file.name}\n\n${kept}`);
    included.push({ name: file.name, chars: kept.length, originalChars: content.length });
  }
  if (sections.length === 0) return { text: "", files: [], truncated };
  const soul = included.some((file) => file.name === "SOUL.md") ? `\n${SOUL_NOTE}` : "";
  const notice = truncated ? `\n\n${BOOTSTRAP_TRUNCATION_NOTICE}` : "";
  const head = `# Project Context\n\nThe following project context files have been loaded:${soul}`;
  return { text: `${head}\n\n${sections.join("\n\n")}${notice}`, files: included, truncated };
}
