import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { baselineRun, createBaselineClient } from "../../bench/baseline";
import { BenchModelServer } from "../../bench/model-server";
import { messageFor, parseDirective, planReply, TOOL_ROUNDS } from "../../bench/shapes";
import { jainIndex, percentile, summarize } from "../../bench/stats";
import { slopePer1000 } from "../../bench/phases/memory";
import { cpuMark, levelCpu } from "../../bench/phases/throughput";

describe("summary statistics", () => {
  it("uses nearest-rank percentiles", () => {
    const values = Array.from({ length: 20 }, (_, i) => i + 1); // 1..20
    expect(percentile(values, 50)).toBe(10);
    expect(percentile(values, 95)).toBe(19);
    expect(percentile([7], 95)).toBe(7);
    expect(summarize([3, 1, 2])).toMatchObject({ n: 3, median: 2, min: 1, max: 3, mean: 2 });
  });

  it("scores fairness with Jain's index", () => {
    expect(jainIndex([5, 5, 5, 5])).toBe(1);
    expect(jainIndex([1, 0, 0, 0])).toBe(0.25);
  });
});

describe("a throughput level's CPU", () => {
  it("divides the window's CPU by the completed runs and bounds runs/s by the cores", () => {
    const cpu = levelCpu({ cpuMs: 1_000, loopActiveMs: 200 }, { cpuMs: 21_000, loopActiveMs: 5_200 }, 10_000, 80, 2)!;
    expect(cpu.msPerRun).toBe(250);
    expect(cpu.mainThreadMsPerRun).toBe(62.5);
    expect(cpu.coresBusy).toBe(2);
    expect(cpu.cpuBoundRunsPerSecond).toBe(8);
    expect(levelCpu({ cpuMs: 0, loopActiveMs: 0 }, { cpuMs: 5, loopActiveMs: 1 }, 100, 0, 2)).toBeUndefined();
  });

  it("reads this process's CPU and event loop, both moving forward with work", () => {
    const before = cpuMark();
    let spin = 0;
    for (let i = 0; i < 5_000_000; i += 1) spin += i % 7;
    const after = cpuMark();
    expect(spin).toBeGreaterThan(0);
    expect(after.cpuMs).toBeGreaterThan(before.cpuMs);
    expect(after.loopActiveMs).toBeGreaterThanOrEqual(before.loopActiveMs);
  });
});

describe("run shapes", () => {
  it("round-trips the directive a run's message carries", () => {
    expect(parseDirective(messageFor("stream", "t-1", { words: 300, delayMs: 10 }))).toEqual({ shape: "stream", runTag: "t-1", params: { words: 300, delayMs: 10 } });
    expect(parseDirective("hello")).toBeUndefined();
  });

  it("plans three calculator round trips, then the answer", () => {
    const directive = parseDirective(messageFor("tools-3", "t-2"))!;
    const kinds = [0, 1, 2, 3].map((round) => planReply(directive, round, round));
    expect(kinds.slice(0, TOOL_ROUNDS).every((r) => r.kind === "stream" && r.script.toolCalls?.[0].name === "calculator")).toBe(true);
    expect(kinds[3]).toMatchObject({ kind: "stream", script: { text: expect.any(String) } });
  });

  it("rate-limits the first request of a retry-429 run only", () => {
    const directive = parseDirective(messageFor("retry-429", "t-3"))!;
    expect(planReply(directive, 0, 0)).toMatchObject({ kind: "error", status: 429 });
    expect(planReply(directive, 0, 1)).toMatchObject({ kind: "stream" });
  });
});

describe("bench model server driven by the baseline loop", () => {
  let server: BenchModelServer;
  beforeAll(async () => {
    server = await BenchModelServer.start();
  });
  afterAll(async () => server?.close());

  it("answers each conversation from its own content and times itself per run", async () => {
    const client = createBaselineClient(server.baseURL);
    // Two runs interleaved: neither steals the other's steps.
    await Promise.all([baselineRun(client, "tools-3", "a-1", "sys"), baselineRun(client, "one-call", "b-1", "sys")]);
    expect(server.statsOf("a-1")).toMatchObject({ requests: TOOL_ROUNDS + 1, statuses: [200, 200, 200, 200] });
    expect(server.statsOf("b-1")).toMatchObject({ requests: 1, statuses: [200] });
    expect(server.statsOf("a-1").serverMs).toBeGreaterThan(0);
  });
});

describe("slopePer1000 (the memory phase's growth per run)", () => {
  it("is the least-squares slope of RSS over runs, per 1,000 runs", () => {
    // Prepare: 2 MB per 1,000 runs with noise of +/-1 MB that averages out
    const samples = [
      { runs: 1000, mb: 100 },
      { runs: 2000, mb: 103 },
      { runs: 3000, mb: 103 },
      { runs: 4000, mb: 106 },
    ];
    // Act / Assess
    expect(slopePer1000(samples)).toBeCloseTo(1.8, 5);
    expect(slopePer1000([{ runs: 0, mb: 10 }, { runs: 500, mb: 10 }])).toBe(0);
    expect(slopePer1000([{ runs: 1000, mb: 5 }])).toBeNaN();
  });
});
