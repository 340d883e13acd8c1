import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { prepareAttempt, runAttemptSession, type AttemptSessionInput } from "../../shared/agent/attempt-session";
import { BOOTSTRAP_TRUNCATION_NOTICE, buildBootstrapContext } from "../../shared/agent/prompt/bootstrap";
import { buildSkillsPrompt } from "../../shared/agent/prompt/skills";
import { createDirWorkspaceSource, parseSkill, type Workspace } from "../../shared/agent/prompt/workspace";
import { buildToolSurface } from "../../shared/agent/tools/registry";
import { createUsageMeter } from "../../shared/agent/usage-meter";
import { ContextConfigSchema, ToolsConfigSchema } from "../../shared/config/attempt-config";
import type { Message } from "../../shared/core/messages";
import { NO_SPEND } from "../../shared/core/spend";
import { HookRegistry } from "../../shared/hooks/registry";
import { countingTool, RecordingSink, ScriptedProvider, toolMap, user, type ScriptedTurn } from "./helpers";

const workspace: Workspace = {
  files: [
    { name: "AGENTS.md", content: "Always cite sources." },
    { name: "SOUL.md", content: "Warm and precise." },
  ],
  skills: [parseSkill("pdf", "---\nname: pdf\ndescription: Work with PDF files\n---\n# PDF\nSteps...")],
};

function input(turns: ScriptedTurn[], overrides: Partial<AttemptSessionInput> = {}) {
  const committed: Message[][] = [];
  const provider = new ScriptedProvider(turns);
  const session: AttemptSessionInput = {
    provider,
    model: "m",
    modelRef: "openai/m",
    transcript: [user("What is in the report?")],
    workspace,
    prompt: { basePrompt: "BASE", extraSystemPrompt: "Answer in Spanish.", bootstrapMaxChars: 20_000, bootstrapTotalMaxChars: 60_000, maxSkillsPromptChars: 30_000 },
    context: ContextConfigSchema.parse({}),
    tools: toolMap(countingTool("lookup"), countingTool("write", { mutating: true })),
    hooks: new HookRegistry(),
    commitTurn: async (turn) => {
      committed.push(turn);
    },
    sink: new RecordingSink(),
    toolContext: { runId: "r1", sessionKey: "s1", signal: new AbortController().signal },
    maxToolRounds: 8,
    shouldYield: () => false,
    ...overrides,
  };
  return { session, provider, committed };
}

describe("prompt assembly", () => {
  it("builds OpenClaw's sections in its order (identity, tooling, safety, skills, workspace, time, run context, files, runtime), then hook contexts around it", async () => {
    const hooks = new HookRegistry().register("before_prompt_build", () => ({ prependSystemContext: "PRE", appendSystemContext: "POST", prependContext: "Today is Monday." }));
    const { session, provider } = input([{ text: "Hecho." }], { hooks, tools: toolMap(countingTool("lookup"), countingTool("read_skill")) });
    const result = await runAttemptSession(session);
    expect(result.outcome).toEqual({ kind: "completed" });
    const system = provider.requests[0].system;
    const order = [
      "PRE",
      "BASE",
      "## Tooling",
      "## Tool Call Style",
      "## Safety",
      "## Skills (mandatory)",
      "<available_skills>",
      "## Workspace\n",
      "## Current Date & Time",
      "## Workspace Files (injected)",
      "## Conversation Context",
      "Answer in Spanish.",
      "# Project Context",
      "## AGENTS.md",
      "## SOUL.md",
      "## Silent Replies",
      "## Runtime",
      "POST",
    ];
    const positions = order.map((marker) => system.indexOf(marker));
    expect(positions.every((p) => p >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    expect(system).toContain('<skill name="pdf">Work with PDF files</skill>');
    // prependContext goes in front of the user's prompt, for this attempt only.
    expect(provider.requests[0].messages).toEqual([user("Today is Monday.\n\nWhat is in the report?")]);
  });

  it("lets a hook replace the system prompt and narrow the tools", async () => {
    const hooks = new HookRegistry().register("before_prompt_build", () => ({ systemPrompt: "ONLY THIS", toolsAllow: ["lookup"] }));
    const { session, provider } = input([{ text: "ok" }], { hooks });
    await runAttemptSession(session);
    expect(provider.requests[0].system).toBe("ONLY THIS");
    expect(provider.requests[0].tools.map((t) => t.name)).toEqual(["lookup"]);
  });

  it("caps bootstrap files at 20000 chars each and 60000 in total, with one notice", () => {
    const files = ["AGENTS.md", "SOUL.md", "IDENTITY.md", "USER.md"].map((name) => ({ name, content: name[0].repeat(25_000) }));
    const context = buildBootstrapContext(files, { perFileMaxChars: 20_000, totalMaxChars: 60_000 });
    expect(context.files.map((f) => f.chars)).toEqual([20_000, 20_000, 20_000]);
    expect(context.truncated).toBe(true);
    expect(context.text.split(BOOTSTRAP_TRUNCATION_NOTICE)).toHaveLength(2);
    expect(buildBootstrapContext([{ name: "AGENTS.md", content: "short" }], { perFileMaxChars: 20_000, totalMaxChars: 60_000 }).truncated).toBe(false);
  });

  it("lists skills within their budget and counts the ones left out", () => {
    const skills = Array.from({ length: 50 }, (_, i) => parseSkill(`skill-${i}`, `A skill that does thing number ${i}.`));
    const prompt = buildSkillsPrompt(skills, 1000);
    expect(prompt.text.length).toBeLessThanOrEqual(1000);
    expect(prompt.listed.length + prompt.omitted).toBe(50);
    expect(prompt.omitted).toBeGreaterThan(0);
  });
});

describe("workspace from a directory", () => {
  const dir = mkdtempSync(join(tmpdir(), "workspace-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("reads the bootstrap files in their fixed order and skills/<name>/SKILL.md; read_skill serves them", async () => {
    writeFileSync(join(dir, "USER.md"), "The user is Ana.");
    writeFileSync(join(dir, "AGENTS.md"), "Be careful.");
    writeFileSync(join(dir, "NOTES.md"), "not a bootstrap file");
    mkdirSync(join(dir, "skills", "weather"), { recursive: true });
    writeFileSync(join(dir, "skills", "weather", "SKILL.md"), "# Weather\n\nLook up forecasts with http_fetch.\n");
    const loaded = await createDirWorkspaceSource(dir).load();
    expect(loaded.files.map((f) => f.name)).toEqual(["AGENTS.md", "USER.md"]);
    expect(loaded.skills).toEqual([{ name: "weather", description: "Weather", content: "# Weather\n\nLook up forecasts with http_fetch.\n" }]);
    const tools = buildToolSurface({ config: ToolsConfigSchema.parse({}), skills: loaded.skills });
    expect([...tools.keys()]).toEqual(["calculator", "current_time", "http_fetch", "read_skill"]);
    const read = await tools.get("read_skill")!.execute({ name: "weather" }, { runId: "r", sessionKey: "s", signal: new AbortController().signal });
    expect(read.content).toContain("Look up forecasts");
    const none = await createDirWorkspaceSource(join(dir, "missing")).load();
    expect(none).toEqual({ files: [], skills: [] });
    expect([...buildToolSurface({ config: ToolsConfigSchema.parse({}), skills: [] }).keys()]).not.toContain("read_skill");
  });
});

describe("before the first model call", () => {
  it("returns the precheck route (here compact_only) without calling the model", async () => {
    const { session, provider } = input([], {
      context: ContextConfigSchema.parse({ contextTokens: 20_000, reserveTokens: 5000 }),
      transcript: [user("x".repeat(200_000))],
    });
    const result = await runAttemptSession(session);
    expect(result.outcome).toMatchObject({ kind: "context_precheck", route: "compact_only", promptBudgetTokens: 15_000 });
    expect(provider.requests).toHaveLength(0);
  });

  it("returns truncate_tool_results_only when one old tool result is what does not fit, with the cap to cut to", async () => {
    const transcript: Message[] = [
      user("fetch it"),
      { role: "assistant", content: [{ type: "tool_call", id: "c", name: "lookup", args: {} }], provider: "p", model: "m", stopReason: "tool_calls", usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } },
      { role: "tool_result", toolCallId: "c", toolName: "lookup", content: "z".repeat(80_000), isError: false },
      user("and now?"),
    ];
    const { session } = input([], { transcript, context: ContextConfigSchema.parse({ contextTokens: 20_000, reserveTokens: 1000 }) });
    const prepared = await prepareAttempt(session);
    expect(prepared.toolResultMaxChars).toBe(16_000); // the hard cap below 100k-token windows (30% of 20k tokens x 4 would be 24k)
    const result = await runAttemptSession(session);
    expect(result.outcome).toMatchObject({ kind: "context_precheck", route: "truncate_tool_results_only", toolResultMaxChars: 16_000 });
  });

  it("stops at once when the budget is already spent", async () => {
    const meter = createUsageMeter({ budgets: { session: { maxTokens: 100 } }, spentBefore: { run: NO_SPEND, session: { tokens: 100, costUsd: 0 } } });
    const { session, provider } = input([], { meter });
    expect((await runAttemptSession(session)).outcome).toEqual({ kind: "budget_exceeded", scope: "session", limit: "tokens", spent: 100, max: 100 });
    expect(provider.requests).toHaveLength(0);
  });

  it("lets before_agent_reply take the turn: its reply is committed, no model call", async () => {
    const hooks = new HookRegistry().register("before_agent_reply", (e) => (e.prompt.includes("report") ? { handled: true, reply: "Cached answer." } : undefined));
    const { session, provider, committed } = input([], { hooks });
    const result = await runAttemptSession(session);
    expect(result).toMatchObject({ outcome: { kind: "completed" }, finalText: "Cached answer." });
    expect(committed).toEqual([[expect.objectContaining({ role: "assistant", provider: "hook", content: [{ type: "text", text: "Cached answer." }] })]]);
    expect(provider.requests).toHaveLength(0);
  });

  it("does not run agent_end: it fires once per run, in FinalizeRun, not once per attempt", async () => {
    const ends: string[] = [];
    const hooks = new HookRegistry().register("agent_end", (e) => {
      ends.push(`${e.outcome}:${e.finalText}`);
    });
    const { session } = input([{ calls: [{ name: "lookup" }] }, { text: "Fine." }], { hooks });
    expect(await runAttemptSession(session)).toMatchObject({ outcome: { kind: "completed" }, finalText: "Fine." });
    expect(ends).toEqual([]);
  });
});
