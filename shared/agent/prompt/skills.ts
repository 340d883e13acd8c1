import type { Skill } from "./workspace";

/**
 * The skills section (reference §D.40): a compact list of names and
 * descriptions; the model reads a skill's full SKILL.md on demand with the
 * read_skill tool. Skills past `maxChars` are left out and counted.
 */
export function buildSkillsPrompt(skills: readonly Skill[], maxChars: number): { text: string; listed: string[]; omitted: number } {
  if (skills.length === 0 || maxChars <= 0) return { text: "", listed: [], omitted: skills.length };
  // The heading and instructions around the block are the prompt's Skills section (./sections.ts).
  const head = "<available_skills>\n";
  const foot = "</available_skills>";
  let used = head.length + foot.length;
  const lines: string[] = [];
  const listed: string[] = [];
  for (const skill of skills) {
    const line = `<skill name="${escape(skill.name)}">${escape(skill.description)}</skill>\n`;
    if (used + line.length > maxChars) break;
    used += line.length;
    lines.push(line);
    listed.push(skill.name);
  }
  if (listed.length === 0) return { text: "", listed: [], omitted: skills.length };
  return { text: `${head}${lines.join("")}${foot}`, listed, omitted: skills.length - listed.length };
}

function escape(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}
