import type { PromptMode } from "../../config/prompt-config";

/**
 * The sections of the system prompt, in OpenClaw's order and under its
 * headings (src/agents/system-prompt.ts `buildAgentSystemPrompt`; reference
 * §D.38), in our own words and for what this runner has (no shell, no file
 * system, no gateway CLI):
 *
 *   identity line (agent.systemPrompt)
 *   ## Tooling                      tools actually offered, one line each
 *   ## Tool Call Style
 *   ## Safety
 *   ## Skills (mandatory)           full only, when read_skill is offered
 *   ## Workspace
 *   ## Current Date & Time
 *   ## Workspace Files (injected)   when bootstrap files are included
 *   ## Conversation Context         per-run extraSystemPrompt (## Subagent Context in minimal)
 *   # Project Context               the bootstrap files, capped (./bootstrap.ts)
 *   ## Silent Replies               full only
 *   ## Runtime
 *
 * `none` is the identity line alone. Sections are joined by a blank line.
 */
export interface PromptTool {
  name: string;
  description: string;
}

export interface PromptSectionsInput {
  mode: PromptMode;
  identity: string;
  tools: readonly PromptTool[];
  /** MCP servers down for this attempt (name -> why). */
  unavailableToolServers?: ReadonlyMap<string, string>;
  /** The `<available_skills>` block (./skills.ts); empty when there are none. */
  skillsBlock?: string;
  /** Where the workspace comes from, in words (a directory, the table item). */
  workspace: string;
  /** When the run was accepted (stable across its attempts, so prompt caches stay warm). */
  runStartedAt: number;
  timezone: string;
  /** The `# Project Context` section (./bootstrap.ts); empty when no file is included. */
  projectContext?: string;
  extra?: string;
  runtime: { agentId: string; model: string; channel?: string; thinking?: string };
}

/** Our built-in tools first, in this order (OpenClaw lists its core tools in a fixed order), then the rest by name. */
const TOOL_ORDER = ["calculator", "current_time", "http_fetch", "read_skill"];
export const READ_SKILL_TOOL = "read_skill";
export const SILENT_REPLY_TOKEN = "NO_REPLY";

export function buildPromptSections(input: PromptSectionsInput): string {
  const identity = input.identity.trim();
  if (input.mode === "none") return identity;
  const full = input.mode === "full";
  return [
    identity,
    toolingSection(input.tools, input.unavailableToolServers),
    TOOL_CALL_STYLE,
    SAFETY,
    full ? skillsSection(input.skillsBlock, input.tools) : undefined,
    workspaceSection(input.workspace),
    dateTimeSection(input.runStartedAt, input.timezone, input.tools),
    input.projectContext ? WORKSPACE_FILES : undefined,
    input.extra?.trim() ? `${full ? "## Conversation Context" : "## Subagent Context"}\n${input.extra.trim()}` : undefined,
    input.projectContext || undefined,
    full ? SILENT_REPLIES : undefined,
    runtimeSection(input.runtime),
  ]
    .filter((section): section is string => typeof section === "string" && section.trim() !== "")
    .join("\n\n");
}

function toolingSection(tools: readonly PromptTool[], unavailable: ReadonlyMap<string, string> | undefined): string {
  const ordered = [
    ...TOOL_ORDER.flatMap((name) => tools.filter((t) => t.name === name)),
    ...tools.filter((t) => !TOOL_ORDER.includes(t.name)).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
  ];
  const lines = ordered.map((tool) => {
    const summary = summarize(tool.description);
    return summary ? `- ${tool.name}: ${summary}` : `- ${tool.name}`;
  });
  const down = [...(unavailable ?? new Map<string, string>())].map(([server]) => `- MCP server "${server}" is unavailable in this attempt; its tools (${server}__*) cannot be called.`);
  return [
    "## Tooling",
    "Tool availability (filtered by policy):",
    "Tool names are case-sensitive. Call tools exactly as listed.",
    lines.length > 0 ? lines.join("\n") : "No tools are available in this run.",
    ...down,
    "TOOLS.md does not control tool availability; it is guidance on how to use the tools.",
  ].join("\n");
}

const TOOL_CALL_STYLE = [
  "## Tool Call Style",
  "Call routine, low-risk tools without narrating them.",
  "Explain briefly only when it helps: multi-step work, hard problems, actions with side effects, or when the user asks.",
].join("\n");

const SAFETY = [
  "## Safety",
  "Pursue no goals of your own: no self-preservation, replication, gathering of resources or power; do not plan beyond what the user asked for.",
  "Put safety and human oversight above finishing a task: when instructions conflict, stop and ask; honour requests to stop, pause or audit, and never work around safeguards.",
  "Do not talk anyone into widening your access or switching off safeguards, and do not change your instructions, safety rules or tool policies unless explicitly asked.",
].join("\n");

function skillsSection(block: string | undefined, tools: readonly PromptTool[]): string | undefined {
  if (!block?.trim() || !tools.some((t) => t.name === READ_SKILL_TOOL)) return undefined;
  return [
    "## Skills (mandatory)",
    "Before replying, scan the descriptions in <available_skills>.",
    `- If exactly one skill clearly applies: read it with \`${READ_SKILL_TOOL}\`, then follow it.`,
    "- If several could apply: choose the most specific one, then read and follow it.",
    "- If none clearly applies: read none.",
    "Never read more than one skill up front; read only after choosing.",
    block.trim(),
  ].join("\n");
}

function workspaceSection(workspace: string): string {
  return [
    "## Workspace",
    `Your workspace is ${workspace}; its files are read at the start of every attempt.`,
    "There is no shell or file system here: act only through the tools listed above.",
  ].join("\n");
}

function dateTimeSection(at: number, timezone: string, tools: readonly PromptTool[]): string {
  const when = new Intl.DateTimeFormat("en-US", {
    timeZone: timezone,
    weekday: "long",
    year: "numeric",
    month: "long",
    day: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23",
  }).format(at);
  const fresh = tools.some((t) => t.name === "current_time") ? "For the exact current time, call current_time." : undefined;
  return ["## Current Date & Time", `Time zone: ${timezone}`, `This run started: ${when}`, fresh].filter(Boolean).join("\n");
}

const WORKSPACE_FILES = ["## Workspace Files (injected)", "These user-editable files are loaded by the runner and included below in Project Context."].join("\n");

const SILENT_REPLIES = [
  "## Silent Replies",
  `When you have nothing to say, respond with only: ${SILENT_REPLY_TOKEN}`,
  "It must be your entire message: never add it to a real reply, never wrap it in markdown.",
].join("\n");

function runtimeSection(runtime: PromptSectionsInput["runtime"]): string {
  const parts = [`agent=${runtime.agentId}`, `model=${runtime.model}`, runtime.channel ? `channel=${runtime.channel}` : undefined, `thinking=${runtime.thinking ?? "off"}`];
  return ["## Runtime", `Runtime: ${parts.filter(Boolean).join(" | ")}`].join("\n");
}

/** One line per tool: the description's first sentence, at most 160 characters. */
function summarize(description: string): string {
  const line = description.trim().split(/\r?\n/)[0] ?? "";
  const sentence = /^(.+?[.!?])(\s|$)/.exec(line)?.[1] ?? line;
  return sentence.length > 160 ? `${sentence.slice(0, 157)}...` : sentence;
}
