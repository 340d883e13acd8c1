/**
 * Figure 1: runtime overhead per run. Client-side time from the `agent`
 * request to the lifecycle end frame, minus the time the model server spent
 * answering that run, next to the same conversation driven through the
 * `openai` SDK in a plain loop. Runtime and baseline runs are interleaved so
 * background load on the machine hits both alike; warm-up runs are dropped.
 */
import type { LocalStack } from "../../infra/local/stack";
import type { TestWsClient } from "../../test/support/ws-client";
import { baselineRun, createBaselineClient } from "../baseline";
import { closeAll, driveRun, openClient } from "../harness";
import type { BenchModelServer } from "../model-server";
import type { Shape } from "../shapes";
import { summarize, type Summary } from "../stats";

export const OVERHEAD_SHAPES = ["one-call", "tools-3"] as const satisfies readonly Shape[];
type OverheadShape = (typeof OVERHEAD_SHAPES)[number];

export interface Samples {
  totalMs: number[];
  modelMs: number[];
  /** totalMs - modelMs, per run */
  overheadMs: number[];
}

export interface ShapeOverhead {
  runtime: Samples;
  baseline: Samples;
  summary: { runtime: Summary; baseline: Summary; medianRatio: number; p95Ratio: number; medianExtraMs: number };
  failures: number;
}

export interface OverheadResult {
  runs: number;
  warmup: number;
  shapes: Record<OverheadShape, ShapeOverhead>;
}

const empty = (): Samples => ({ totalMs: [], modelMs: [], overheadMs: [] });

export async function measureOverhead(stack: LocalStack, model: BenchModelServer, options: { runs: number; warmup: number }): Promise<OverheadResult> {
  const baseline = createBaselineClient(model.baseURL);
  const systemPrompt = stack.config.agent.systemPrompt;
  const samples = Object.fromEntries(OVERHEAD_SHAPES.map((shape) => [shape, { runtime: empty(), baseline: empty(), failures: 0 }])) as Record<
    OverheadShape,
    { runtime: Samples; baseline: Samples; failures: number }
  >;
  const clients: TestWsClient[] = [];
  try {
    for (let i = 0; i < options.warmup + options.runs; i += 1) {
      const keep = i >= options.warmup;
      for (const shape of OVERHEAD_SHAPES) {
        const tag = `ovh-${shape}-${String(i).padStart(4, "0")}`;
        const client = await openClient(stack);
        clients.push(client);
        const run = await driveRun(client, { sessionKey: `bench-${tag}`, shape, runTag: tag });
        if (run.phase !== "end") samples[shape].failures += 1;
        else if (keep) record(samples[shape].runtime, run.ms, model.statsOf(tag).serverMs);
        const baseTag = `base-${tag}`;
        const baseMs = await baselineRun(baseline, shape, baseTag, systemPrompt);
        if (keep) record(samples[shape].baseline, baseMs, model.statsOf(baseTag).serverMs);
      }
      // Connections stay open until the end: a closing one would run `$disconnect` inside the next run.
    }
  } finally {
    await closeAll(clients);
  }
  const shapes = Object.fromEntries(
    OVERHEAD_SHAPES.map((shape) => {
      const { runtime, baseline: base, failures } = samples[shape];
      const rt = summarize(runtime.overheadMs);
      const bl = summarize(base.overheadMs);
      const summary = { runtime: rt, baseline: bl, medianRatio: rt.median / bl.median, p95Ratio: rt.p95 / bl.p95, medianExtraMs: rt.median - bl.median };
      return [shape, { runtime, baseline: base, summary, failures }];
    }),
  ) as Record<OverheadShape, ShapeOverhead>;
  return { runs: options.runs, warmup: options.warmup, shapes };
}

function record(samples: Samples, totalMs: number, modelMs: number): void {
  samples.totalMs.push(round(totalMs));
  samples.modelMs.push(round(modelMs));
  samples.overheadMs.push(round(totalMs - modelMs));
}

const round = (ms: number) => Math.round(ms * 1000) / 1000;
