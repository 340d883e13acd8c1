import { describe, expect, it } from "vitest";
import { prepareAttempt, runAttemptSession, type AttemptSessionInput } from "../../shared/agent/attempt-session";
import { BOOTSTRAP_TRUNCATION_NOTICE, selectBootstrapFiles } from "../../shared/agent/prompt/bootstrap";
import { parseSkill, type Workspace } from "../../shared/agent/prompt/workspace";
import { CONTINUATION_INSTRUCTIONS } from "../../shared/agent/system-prompt";
import { ContextConfigSchema } from "../../shared/config/attempt-config";
import { PromptConfigSchema } from "../../shared/config/prompt-config";
import { checkContextWindow } from "../../shared/core/context-window-guard";
import { HookRegistry } from "../../shared/hooks/registry";
import { countingTool, RecordingSink, ScriptedProvider, toolMap, user, type ScriptedTurn } from "./helpers";

/**
 * The system prompt as OpenClaw builds it (src/agents/system-prompt.ts):
 * sections, modes, bootstrap files and their caps, the tools actually
 * offered, the date in the user's time zone; and the context-window guard.
 */
const workspace: Workspace = {
  files: [
    { name: "AGENTS.md", content: "Always cite sources." },
    { name: "SOUL.md", content: "Warm and precise." },
    { name: "TOOLS.md", content: "Prefer the knowledge base." },
    { name: "IDENTITY.md", content: "Name: Ada." },
    { name: "USER.md", content: "The user is Ana." },
    { name: "BOOTSTRAP.md", content: "Welcome! Ask the user for their name." },
  ],
  skills: [parseSkill("pdf", "---\nname: pdf\ndescription: Work with PDF files\n---\n# PDF\nSteps...")],
};

// 2026-03-02 08:30 UTC, a Monday: 09:30 in Madrid.
const ACCEPTED_AT = Date.UTC(2026, 2, 2, 8, 30);

function session(overrides: Partial<AttemptSessionInput> = {}, prompt: Partial<AttemptSessionInput["prompt"]> = {}, turns: ScriptedTurn[] = [{ text: "ok" }]) {
  const provider = new ScriptedProvider(turns);
  const input: AttemptSessionInput = {
    provider,
    model: "gpt-4o",
    modelRef: "openai/gpt-4o",
    transcript: [user("hello")],
    workspace,
    prompt: {
      basePrompt: "You are Ada, a helpful assistant.",
      bootstrapMaxChars: 20_000,
      bootstrapTotalMaxChars: 60_000,
      maxSkillsPromptChars: 30_000,
      userTimezone: "Europe/Madrid",
      runStartedAt: ACCEPTED_AT,
      channel: "ws",
      workspaceLabel: "the agent's workspace folder",
      ...prompt,
    },
    context: ContextConfigSchema.parse({}),
    tools: toolMap(countingTool("calculator"), countingTool("read_skill"), countingTool("kb__lookup")),
    hooks: new HookRegistry(),
    commitTurn: async () => undefined,
    sink: new RecordingSink(),
    toolContext: { runId: "r1", sessionKey: "s1", signal: new AbortController().signal },
    maxToolRounds: 4,
    shouldYield: () => false,
    ...overrides,
  };
  return { input, provider };
}

const systemOf = async (overrides: Partial<AttemptSessionInput> = {}, prompt: Partial<AttemptSessionInput["prompt"]> = {}) => (await prepareAttempt(session(overrides, prompt).input)).system;
const headings = (system: string) => system.split("\n").filter((line) => /^#{1,2} /.test(line));

describe("system prompt modes", () => {
  it("full: every section in OpenClaw's order, the bootstrap files in theirs", async () => {
    const system = await systemOf({}, { extraSystemPrompt: "Answer in Spanish.", firstRun: true });
    expect(system.startsWith("You are Ada, a helpful assistant.\n\n## Tooling\n")).toBe(true);
    expect(headings(system)).toEqual([
      "## Tooling",
      "## Tool Call Style",
      "## Safety",
      "## Skills (mandatory)",
      "## Workspace",
      "## Current Date & Time",
      "## Workspace Files (injected)",
      "## Conversation Context",
      "# Project Context",
      "## AGENTS.md",
      "## SOUL.md",
      "## TOOLS.md",
      "## IDENTITY.md",
      "## USER.md",
      "## BOOTSTRAP.md",
      "## Silent Replies",
      "## Runtime",
    ]);
    expect(system).toContain("If SOUL.md is present, embody its persona and tone");
    expect(system.endsWith("## Runtime\nRuntime: agent=main | model=openai/gpt-4o | channel=ws | thinking=off")).toBe(true);
  });

  it("minimal: tooling, safety, workspace, time, run context, AGENTS.md only and runtime; no skills or silent replies", async () => {
    const system = await systemOf({}, { mode: "minimal", extraSystemPrompt: "You are a sub-task.", firstRun: true });
    expect(headings(system)).toEqual([
      "## Tooling",
      "## Tool Call Style",
      "## Safety",
      "## Workspace",
      "## Current Date & Time",
      "## Workspace Files (injected)",
      "## Subagent Context",
      "# Project Context",
      "## AGENTS.md",
      "## Runtime",
    ]);
  });

  it("none: the identity line alone (a continuation instruction of the outer loop still follows)", async () => {
    expect(await systemOf({}, { mode: "none", extraSystemPrompt: "ignored in none" })).toBe("You are Ada, a helpful assistant.");
    expect(await systemOf({}, { mode: "none", continuation: "empty_response" })).toBe(`You are Ada, a helpful assistant.\n\n${CONTINUATION_INSTRUCTIONS.empty_response}`);
  });

  it("the mode is configuration: `prompt.mode`, default full, with a valid IANA time zone", () => {
    expect(PromptConfigSchema.parse({})).toEqual({ mode: "full", userTimezone: "UTC", agentId: "main" });
    expect(() => PromptConfigSchema.parse({ userTimezone: "Mars/Olympus" })).toThrow(/IANA time zone/);
  });
});

describe("system prompt sections", () => {
  it("Tooling lists the tools actually offered: built-ins first, then by name; rebuilt when a hook narrows them", async () => {
    const system = await systemOf();
    const tooling = system.slice(system.indexOf("## Tooling"), system.indexOf("## Tool Call Style"));
    expect(tooling.split("\n").filter((l) => l.startsWith("- "))).toEqual(["- calculator: test tool calculator", "- read_skill: test tool read_skill", "- kb__lookup: test tool kb__lookup"]);
    const hooks = new HookRegistry().register("before_prompt_build", () => ({ toolsAllow: ["kb__lookup"] }));
    const narrowed = await systemOf({ hooks });
    expect(narrowed).toContain("- kb__lookup");
    expect(narrowed).not.toContain("- calculator");
    // Without read_skill the model could not read a skill: the Skills section goes too.
    expect(narrowed).not.toContain("## Skills (mandatory)");
  });

  it("Tooling says which MCP servers are down for this attempt", async () => {
    const system = await systemOf({ unavailableToolServers: new Map([["tickets", "fetch failed"]]) });
    expect(system).toContain('- MCP server "tickets" is unavailable in this attempt; its tools (tickets__*) cannot be called.');
  });

  it("the date and time are the run's acceptance time in the user's time zone (the same prompt on every attempt)", async () => {
    const system = await systemOf();
    expect(system).toContain("## Current Date & Time\nTime zone: Europe/Madrid\nThis run started: Monday, March 2, 2026 at 09:30");
    expect(await systemOf({}, { userTimezone: "America/New_York" })).toContain("Monday, March 2, 2026 at 03:30");
  });

  it("BOOTSTRAP.md only on a session's first run", async () => {
    expect(await systemOf({}, { firstRun: true })).toContain("## BOOTSTRAP.md");
    expect(await systemOf({}, { firstRun: false })).not.toContain("## BOOTSTRAP.md");
    expect(selectBootstrapFiles(workspace.files, { mode: "full", firstRun: false }).map((f) => f.name)).toEqual(["AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md"]);
  });

  it("bootstrap files keep their caps inside the full prompt (per file, in total, one notice)", async () => {
    const big: Workspace = { files: ["AGENTS.md", "SOUL.md", "USER.md"].map((name) => ({ name, content: name[0].repeat(25_000) })), skills: [] };
    const system = await systemOf({ workspace: big }, { bootstrapMaxChars: 20_000, bootstrapTotalMaxChars: 30_000 });
    expect(system).toContain(`## AGENTS.md\n\n${"A".repeat(20_000)}\n\n## SOUL.md\n\n${"S".repeat(10_000)}\n\n${BOOTSTRAP_TRUNCATION_NOTICE}`);
    expect(system).not.toContain("## USER.md");
  });

  it("the precheck sizes the prompt that is sent, not the base prompt", async () => {
    const small = await prepareAttempt(session({ workspace: { files: [], skills: [] } }).input);
    const withFiles = await prepareAttempt(session({ workspace: { files: [{ name: "AGENTS.md", content: "r".repeat(40_000) }], skills: [] } }, { bootstrapMaxChars: 40_000 }).input);
    // 40000 chars / 4 per token x the 1.2 safety margin.
    expect(withFiles.precheck.estimatedTokens - small.precheck.estimatedTokens).toBeGreaterThanOrEqual(12_000);
  });
});

describe("context-window guard", () => {
  it("warns below 32000 tokens and refuses below 16000 with OpenClaw's error", () => {
    expect(checkContextWindow(200_000)).toEqual({ ok: true });
    expect(checkContextWindow(16_000)).toMatchObject({ ok: true, warning: expect.stringContaining("16000 tokens") });
    expect(checkContextWindow(15_999)).toEqual({ ok: false, message: "Model context window too small (15999 tokens). Minimum is 16000." });
  });

  it("a model below 16000 tokens is refused before it is called; a small one runs with a warning", async () => {
    const refused = session({ context: ContextConfigSchema.parse({ modelContextWindows: { "openai/gpt-4o": 8192 } }) });
    const result = await runAttemptSession(refused.input);
    expect(result.outcome).toMatchObject({ kind: "failed", failure: { kind: "model_not_found", message: "Model context window too small (8192 tokens). Minimum is 16000.", retryable: false } });
    expect(refused.provider.requests).toHaveLength(0);

    const warnings: string[] = [];
    const small = session({ context: ContextConfigSchema.parse({ modelContextWindows: { "openai/gpt-4o": 24_000 } }), onWarning: (message) => warnings.push(message) });
    expect((await runAttemptSession(small.input)).outcome).toEqual({ kind: "completed" });
    expect(warnings).toEqual(["Model context window is small (24000 tokens); below 32000 the run compacts often."]);
  });
});
