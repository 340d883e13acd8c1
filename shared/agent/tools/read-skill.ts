import type { Skill } from "../prompt/workspace";
import { ToolInputError, type ToolDefinition } from "./types";

/** read_skill: returns a skill's SKILL.md, the on-demand half of the skills prompt. */
export function createReadSkillTool(skills: readonly Skill[]): ToolDefinition {
  const byName = new Map(skills.map((skill) => [skill.name, skill]));
  return {
    name: "read_skill",
    description: "Read the full instructions (SKILL.md) of one of the available skills.",
    parameters: {
      type: "object",
      properties: { name: { type: "string", description: "The skill's name as listed in <available_skills>" } },
      required: ["name"],
      additionalProperties: false,
    },
    mutating: false,
    async execute(args) {
      const skill = byName.get(String(args.name).trim());
      if (!skill) throw new ToolInputError(`no skill named "${String(args.name)}"; available: ${[...byName.keys()].join(", ") || "none"}`);
      return { content: skill.content };
    },
  };
}
