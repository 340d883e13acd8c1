import { describe, expect, it } from "vitest";
import { composeRunMessage, nextStart, planAdmission, runsAhead, startOrder, summaryLine, type LaneEntry, type LaneState } from "../../shared/core/lanes";
import { priorityOf, PRIORITY, resolveQueueSettings, type QueueSettings } from "../../shared/core/queue-settings";
import { classifyRunning, shouldReport } from "../../shared/core/stuck";

const DEFAULTS: QueueSettings = { mode: "steer", debounceMs: 500, cap: 20, drop: "summarize" };
const entry = (runId: string, over: Partial<LaneEntry> = {}): LaneEntry => ({ runId, acceptedAt: 1000, kind: "run", priority: 0, ...over });
const lane = (over: Partial<LaneState> = {}): LaneState => ({ waiting: [], dropped: [], ver: 1, ...over });

describe("queue settings", () => {
  it("resolve field by field: request, then session, then channel, then the default", () => {
    const settings = resolveQueueSettings(DEFAULTS, {
      request: { mode: "collect" },
      session: { mode: "followup", cap: 5 },
      channel: { cap: 7, debounceMs: 2000, drop: "old" },
    });
    expect(settings).toEqual({ mode: "collect", cap: 5, debounceMs: 2000, drop: "old" });
    expect(resolveQueueSettings(DEFAULTS, {})).toEqual(DEFAULTS);
  });

  it("gives user-triggered runs priority over webhooks, and both over background work", () => {
    expect(priorityOf("user")).toBe(PRIORITY.foreground);
    expect(priorityOf("manual")).toBe(PRIORITY.foreground);
    expect(priorityOf("webhook")).toBe(PRIORITY.normal);
    for (const trigger of ["cron", "heartbeat", "memory", "overflow"] as const) expect(priorityOf(trigger)).toBe(PRIORITY.background);
  });
});

describe("admission", () => {
  it("takes every message as a run on an idle lane, whatever the mode", () => {
    for (const mode of ["steer", "followup", "collect", "interrupt", "reject"] as const) {
      expect(planAdmission(lane(), { ...DEFAULTS, mode }, "user", 1)).toEqual({ action: "join", kind: "run", priority: 1, answer: "accepted" });
    }
  });

  it("applies the queue mode when the session is busy", () => {
    const busy = lane({ activeRunId: "r0" });
    expect(planAdmission(busy, DEFAULTS, "user", 1)).toEqual({ action: "join", kind: "steer", priority: 1, answer: "steered", into: "r0" });
    expect(planAdmission(busy, { ...DEFAULTS, mode: "followup" }, "user", 1)).toMatchObject({ kind: "run", answer: "queued" });
    expect(planAdmission(busy, { ...DEFAULTS, mode: "collect" }, "user", 1)).toMatchObject({ kind: "collect", answer: "collected" });
    expect(planAdmission(busy, { ...DEFAULTS, mode: "interrupt" }, "user", 1)).toEqual({
      action: "join", kind: "run", priority: PRIORITY.interrupt, answer: "queued", interrupt: "r0",
    });
    expect(planAdmission(busy, { ...DEFAULTS, mode: "reject" }, "user", 1)).toEqual({ action: "reject", reason: "busy" });
  });

  it("refuses a heartbeat behind a busy session, and the newest message on a full queue with drop `new`", () => {
    const busy = lane({ activeRunId: "r0", waiting: [entry("a"), entry("b")] });
    expect(planAdmission(busy, { ...DEFAULTS, mode: "followup" }, "heartbeat", -1)).toEqual({ action: "reject", reason: "busy" });
    expect(planAdmission(busy, { ...DEFAULTS, mode: "followup", cap: 2, drop: "new" }, "user", 1)).toEqual({ action: "reject", reason: "queue_full" });
    expect(planAdmission(busy, { ...DEFAULTS, mode: "followup", cap: 2, drop: "old" }, "user", 1)).toMatchObject({ action: "join" });
  });

  it("steers only into a running run: waiting work without an owner makes it a follow-up", () => {
    expect(planAdmission(lane({ waiting: [entry("a")] }), DEFAULTS, "user", 1)).toMatchObject({ kind: "run", answer: "queued" });
  });
});

describe("start order", () => {
  it("is priority first, then lane order", () => {
    const waiting = [entry("bg", { priority: -1 }), entry("n1"), entry("fg", { priority: 1 }), entry("n2"), entry("int", { priority: 2 })];
    expect(startOrder(waiting).map((e) => e.runId)).toEqual(["int", "fg", "n1", "n2", "bg"]);
    expect(runsAhead(lane({ activeRunId: "r0", waiting }), "n2")).toBe(1 + 3);
  });

  it("batches the collect entries right behind a collect head and waits for their debounce", () => {
    const waiting = [entry("c1", { kind: "collect", acceptedAt: 100, debounceMs: 500 }), entry("c2", { kind: "collect", acceptedAt: 300, debounceMs: 500 }), entry("f", { acceptedAt: 350 }), entry("c3", { kind: "collect", acceptedAt: 400 })];
    expect(nextStart(lane({ waiting }), 700)).toEqual({ type: "not_due", dueAt: 800 });
    expect(nextStart(lane({ waiting }), 800)).toEqual({ type: "start", owner: waiting[0], members: [waiting[1]] });
    expect(nextStart(lane({ waiting: [waiting[2]] }), 0)).toEqual({ type: "start", owner: waiting[2], members: [] });
    expect(nextStart(lane(), 0)).toEqual({ type: "none" });
  });

  it("counts a run that was appended twice once", () => {
    expect(nextStart(lane({ waiting: [entry("a"), entry("a"), entry("b")] }), 0)).toMatchObject({ owner: { runId: "a" } });
    expect(runsAhead(lane({ waiting: [entry("a"), entry("a"), entry("b")] }), "b")).toBe(1);
  });
});

describe("composed messages", () => {
  it("folds a collect batch into one follow-up, in order, with dropped-message notes first", () => {
    const text = composeRunMessage("first", ["second", "third"], ["old one"]);
    expect(text.indexOf("[Queue overflow] 1 earlier message was dropped")).toBe(0);
    expect(text).toContain("- old one");
    expect(text.indexOf("Queued #1\nfirst")).toBeLessThan(text.indexOf("Queued #2\nsecond"));
    expect(text.indexOf("Queued #2\nsecond")).toBeLessThan(text.indexOf("Queued #3\nthird"));
    expect(composeRunMessage("alone", [], [])).toBe("alone");
  });

  it("summarizes a dropped message on one short line", () => {
    expect(summaryLine("  hello\n\n  world  ")).toBe("hello world");
    const long = summaryLine("x".repeat(500));
    expect(long.length).toBe(120);
    expect(long.endsWith("…")).toBe(true);
  });
});

describe("stuck-session diagnostics (reference section O)", () => {
  const base = { now: 1_000_000, startedAt: 0, warnMs: 120_000, abortMs: 360_000, abortRequested: false };

  it("calls a long run that makes progress long-running, a silent one stalled, and aborts past the threshold", () => {
    expect(classifyRunning({ ...base, startedAt: 990_000, lastProgressAt: 999_000 })).toEqual({ kind: "ok" });
    expect(classifyRunning({ ...base, lastProgressAt: 999_000 })).toEqual({ kind: "session.long_running", ageMs: 1_000_000 });
    expect(classifyRunning({ ...base, lastProgressAt: 1_000_000 - 200_000 })).toEqual({ kind: "session.stalled", idleMs: 200_000, abort: false });
    expect(classifyRunning({ ...base, lastProgressAt: 1_000_000 - 400_000 })).toEqual({ kind: "session.stalled", idleMs: 400_000, abort: true });
    expect(classifyRunning({ ...base, lastProgressAt: 1_000_000 - 400_000, abortRequested: true })).toMatchObject({ abort: false });
  });

  it("backs repeated reports off exponentially without stored state", () => {
    const reported = [];
    for (let age = 0; age <= 20 * 60_000; age += 60_000) if (shouldReport(age, 120_000, 60_000)) reported.push(age / 60_000);
    expect(reported).toEqual([2, 4, 8, 16]);
  });
});
