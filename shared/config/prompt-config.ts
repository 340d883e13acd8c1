import * as z from "zod";

/**
 * How the system prompt is built (OpenClaw's buildAgentSystemPrompt; see
 * docs/configuration.md "System prompt"). The identity line is
 * `agent.systemPrompt`; bootstrap caps are under `workspace`.
 */
export const PROMPT_MODES = ["full", "minimal", "none"] as const;
export type PromptMode = (typeof PROMPT_MODES)[number];

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

export const PromptConfigSchema = z
  .object({
    /** `full` (default), `minimal` (tooling, safety, workspace, runtime; AGENTS.md only), `none` (identity line only). */
    mode: z.enum(PROMPT_MODES).default("full"),
    /** IANA time zone of the user (OpenClaw `userTimezone`): the date and time in the prompt are in it. */
    userTimezone: z.string().refine(isTimeZone, "userTimezone must be an IANA time zone such as Europe/Madrid").default("UTC"),
    /** Agent id for the Runtime line (OpenClaw `agent=`). */
    agentId: z.string().min(1).max(64).default("main"),
  })
  .strict();
export type PromptConfig = z.infer<typeof PromptConfigSchema>;
