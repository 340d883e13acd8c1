import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAttempt } from "../../shared/agent/attempt";
import { createUsageMeter } from "../../shared/agent/usage-meter";
import { keys } from "../../shared/aws/keys";
import { createDynamoToolLedger } from "../../shared/aws/tool-ledger";
import { readSpend, readSpendItem, recordSpend } from "../../shared/aws/usage";
import { createTableWorkspaceSource, putWorkspace } from "../../shared/aws/workspace";
import { workspaceSource } from "../../shared/run/attempt-wiring";
import { loadAgentConfig } from "../../shared/config/config";
import type { Message } from "../../shared/core/messages";
import { startTestDb, type TestDb } from "../support/local-db";
import { assistant, call, countingTool, RecordingSink, ScriptedProvider, toolMap, usage, user } from "./helpers";

let t: TestDb;
beforeAll(async () => {
  t = await startTestDb();
});
afterAll(async () => t.close());

describe("tool-call ledger in DynamoDB", () => {
  it("starts a call once (conditional put), completes it once, and reads it back parsed", async () => {
    const ledger = createDynamoToolLedger(t.db, "run-ledger", { retentionDays: 7 });
    expect(await ledger.markStarted("c1", "write")).toBe(true);
    expect(await ledger.markStarted("c1", "write")).toBe(false);
    expect(await ledger.get("c1")).toMatchObject({ status: "started", toolName: "write" });
    await ledger.markCompleted("c1", { content: "done", isError: false });
    await ledger.markCompleted("c1", { content: "second completion is ignored", isError: true });
    expect(await ledger.get("c1")).toMatchObject({ status: "completed", result: { content: "done", isError: false } });
    expect(await ledger.get("unknown")).toBeUndefined();
    const raw = await t.db.doc.send(new GetCommand({ TableName: t.db.table, Key: keys.toolCall("run-ledger", "c1") }));
    expect(raw.Item).toMatchObject({ v: 1, expiresAt: expect.any(Number) });
  });

  it("keeps one pending turn per run until it is cleared", async () => {
    const ledger = createDynamoToolLedger(t.db, "run-pending", { retentionDays: 7 });
    const turn = assistant([call("c9", "write", { a: 1 })], { stopReason: "tool_calls" });
    await ledger.savePendingTurn(turn);
    expect((await ledger.loadPendingTurn())?.message).toEqual(turn);
    await ledger.clearPendingTurn();
    expect(await ledger.loadPendingTurn()).toBeUndefined();
  });

  it("makes a retried attempt on another 'Lambda' replay a completed mutating call instead of re-running it", async () => {
    const write = countingTool("write", { mutating: true, behaviour: () => "saved" });
    const committed: Message[] = [user("save it")];
    const attempt = (turns: ConstructorParameters<typeof ScriptedProvider>[0], commit: (turn: Message[]) => Promise<void>) =>
      runAttempt({
        provider: new ScriptedProvider(turns),
        model: "m",
        system: "",
        history: [...committed],
        tools: toolMap(write),
        commitTurn: commit,
        sink: new RecordingSink(),
        toolContext: { runId: "run-crash", sessionKey: "s", signal: new AbortController().signal },
        ledger: createDynamoToolLedger(t.db, "run-crash", { retentionDays: 7 }), // a fresh adapter, as after a cold start
        maxToolRounds: 4,
        maxToolResultChars: 4000,
        shouldYield: () => false,
      });
    await expect(attempt([{ calls: [{ id: "w1", name: "write" }] }], async () => Promise.reject(new Error("crash")))).rejects.toThrow("crash");
    const result = await attempt([{ text: "Saved." }], async (turn) => {
      committed.push(...turn);
    });
    expect(write.calls).toHaveLength(1);
    expect(result.tools.map((tool) => tool.status)).toEqual(["replayed"]);
    expect(committed.map((m) => m.role)).toEqual(["user", "assistant", "tool_result", "assistant"]);
  });
});

describe("spend counters", () => {
  it("adds every call atomically to the run and the session, wasted apart, and feeds the next attempt's budget", async () => {
    const target = { runId: "run-spend", sessionKey: "sess-spend" };
    await Promise.all([
      recordSpend(t.db, target, usage(100, 50), { tokens: 150, costUsd: 0.25 }, false),
      recordSpend(t.db, target, usage(10, 0), { tokens: 10, costUsd: 0.01 }, true),
      recordSpend(t.db, { ...target, runId: "run-other" }, usage(1, 1), { tokens: 2, costUsd: 0 }, false),
    ]);
    expect(await readSpendItem(t.db, keys.runUsage("run-spend"))).toMatchObject({ calls: 2, input: 110, output: 50, tokens: 160, wastedTokens: 10 });
    expect((await readSpendItem(t.db, keys.runUsage("run-spend")))?.costUsd).toBeCloseTo(0.26);
    const spent = await readSpend(t.db, "run-spend", "sess-spend");
    expect(spent.run.tokens).toBe(160);
    expect(spent.session.tokens).toBe(162);
    const meter = createUsageMeter({ budgets: { session: { maxTokens: 162 } }, spentBefore: spent });
    expect(meter.breach()).toEqual({ scope: "session", limit: "tokens", spent: 162, max: 162 });
  });
});

describe("workspace in the table (how AWS gets bootstrap files and skills)", () => {
  it("reads bootstrap files in their fixed order and skills by name; nothing stored means an empty workspace", async () => {
    const source = createTableWorkspaceSource(t.db, "ws-test");
    expect(await source.load()).toEqual({ files: [], skills: [] });
    await putWorkspace(t.db, { files: { "USER.md": "Ana", "AGENTS.md": "Rules", "OTHER.md": "ignored" }, skills: { "zeta": "# Z\n\nLast", "alpha": "---\ndescription: First\n---\nbody" } }, "ws-test");
    const loaded = await source.load();
    expect(loaded.files).toEqual([
      { name: "AGENTS.md", content: "Rules" },
      { name: "USER.md", content: "Ana" },
    ]);
    expect(loaded.skills.map((s) => [s.name, s.description])).toEqual([
      ["alpha", "First"],
      ["zeta", "Z"],
    ]);
  });

  it("chooses the source from configuration: a directory when given, else the table, or none", () => {
    expect(workspaceSource(t.db, loadAgentConfig({}, undefined)).kind).toBe("table");
    const withDir = { ...loadAgentConfig({}), workspace: { ...loadAgentConfig({}).workspace, dir: "/tmp/ws" } };
    expect(workspaceSource(t.db, withDir).kind).toBe("dir");
    const none = { ...withDir, workspace: { ...withDir.workspace, source: "none" as const } };
    expect(workspaceSource(t.db, none).kind).toBe("none");
  });
});
