import type { WorkspaceFile } from "./workspace";

/**
 * Bootstrap files in the system prompt (reference §D.39): each file capped
 * at `perFileMaxChars` (default 20000), all of them at `totalMaxChars`
 * (default 60000). Truncation adds one generic notice, not one per file.
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
  const notice = truncated ? `\n\n${BOOTSTRAP_TRUNCATION_NOTICE}` : "";
  return { text: `# Workspace files\n\n${sections.join("\n\n")}${notice}`, files: included, truncated };
}
