/**
 * `npx tsx bench/run-trace.ts [shape] [runs] [same-session] [expressions] [aws-latency]`: every metered call one run of
 * a shape makes, in order, with the function that made it, the table, the
 * key and the units it cost; then the totals per operation and the states
 * entered. The per-call breakdown behind issue 15's run-path work: what to
 * cache, merge or drop. Metered like figure 3 (bench/phases/cost.ts).
 */
import { performance } from "node:perf_hooks";
import { BenchModelServer } from "./model-server";
import { driveRun, openClient, startBenchStack } from "./harness";
import { UsageRecorder } from "./recorder";
import type { Shape } from "./shapes";
import { consumedUnits } from "../shared/aws/metering";
import { configuredMemory, costOfRun, scaleBreakdown, usagePerRun } from "./cost";
import { PRICES } from "./prices";
import { awsLikeLatency } from "./latency-model";

interface Traced { at: number; fn: string; op: string; table: string; key: string; units: number; failed: boolean; expression: string }

// `expressions`: also print each DynamoDB call's update / condition expression (what a write changes).
const SHOW_EXPRESSIONS = process.argv.includes("expressions");
// `aws-latency`: every call answered after the latency a region would add (bench/latency-model.ts awsLikeLatency).
const AWS_LATENCY = process.argv.includes("aws-latency");

function summarize(call: { service: string; action: string; principalArn?: string; statusCode: number; requestBody: Buffer; responseBody: Buffer }): Traced | undefined {
  if (!call.principalArn?.includes(":assumed-role/")) return undefined;
  const fn = call.principalArn.slice(call.principalArn.lastIndexOf("/") + 1).replace(/^.*?-/, "");
  const body = safeJson(call.requestBody);
  const out = safeJson(call.responseBody);
  const op = call.action;
  // A BatchGetItem names its table and keys under RequestItems.
  const [batchTable, batch] = Object.entries((body.RequestItems ?? {}) as Record<string, { Keys?: unknown[] }>)[0] ?? [];
  const table = String(body.TableName ?? batchTable ?? body.QueueUrl ?? body.stateMachineArn ?? "").replace(/^.*[/:]/, "");
  const key = JSON.stringify(body.Key ?? batch?.Keys ?? body.ExpressionAttributeValues ?? (body.Item ? pick(body.Item) : "")).slice(0, 110) + eventsIn(call.requestBody);
  return { at: performance.now(), fn, op, table, key, units: consumedUnits(out.ConsumedCapacity), failed: call.statusCode >= 300, expression: String(body.UpdateExpression ?? body.ConditionExpression ?? body.KeyConditionExpression ?? "") };
}

/** An event log item's events, as `stream[:phase]` (what each batch put carries). */
function eventsIn(requestBody: Buffer): string {
  const text = requestBody.toString("utf8");
  if (!/"sk":\{"S":"EV#/.test(text)) return "";
  const streams = [...text.matchAll(/\\?"stream\\?":\s*(?:\{"S":)?\\?"(\w+)\\?"/g)].map((m) => m[1]);
  return streams.length > 0 ? ` [${streams.join(" ")}]` : "";
}

function pick(item: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(item).slice(0, 3));
}

function safeJson(buf: Buffer): Record<string, any> {
  try {
    return JSON.parse(buf.toString("utf8"));
  } catch {
    return {};
  }
}

async function main(): Promise<void> {
  const shape = (process.argv[2] ?? "one-call") as Shape;
  const runs = Number(process.argv[3] ?? 1);
  // `stream` takes the streaming figure's parameters: words=1000 delayMs=10 (about 100 tokens/s).
  const params = shape === "stream" ? { words: 1000, delayMs: 10, ...Object.fromEntries(process.argv.slice(4).filter((arg) => arg.includes("=")).map((arg) => arg.split("=")).map(([k, v]) => [k, Number(v)])) } : undefined;
  const model = await BenchModelServer.start();
  const recorder = new UsageRecorder({ meter: true });
  const trace: Traced[] = [];
  let recording = false;
  const base = recorder.observer();
  const stack = await startBenchStack(model, {
    ...base,
    onEdgeCall: (call) => {
      base.onEdgeCall?.(call);
      const t = recording ? summarize(call) : undefined;
      if (t) trace.push(t);
    },
  }, undefined, AWS_LATENCY ? { callLatencyMs: awsLikeLatency } : {});
  try {
    // `same-session`: every run is the next message of one conversation (one connection, one session, the
    // warm-up its first message); otherwise each run is a fresh session on a fresh connection.
    const conversation = process.argv.includes("same-session");
    const warm = await openClient(stack);
    await driveRun(warm, { sessionKey: conversation ? "trace-0" : "trace-warm", shape, runTag: "trace-warm" });
    const clients = [];
    for (let i = 0; i < runs; i += 1) clients.push(conversation ? warm : await openClient(stack));
    await stack.idle();
    await new Promise((r) => setTimeout(r, 300));
    const mark = recorder.mark();
    recording = true;
    for (const [i, client] of clients.entries()) await driveRun(client, { sessionKey: conversation ? "trace-0" : `trace-${i}`, shape, runTag: `trace-${shape}-${i}`, ...(params ? { params } : {}) });
    await stack.idle();
    recording = false;
    const window = recorder.since(mark);
    const t0 = trace[0]?.at ?? 0;
    for (const t of trace) console.log(`${(t.at - t0).toFixed(1).padStart(7)} ${t.fn.padEnd(14)} ${t.op.padEnd(34)} ${t.table.padEnd(28)} ${t.units.toFixed(1).padStart(4)}${t.failed ? " FAILED" : "       "} ${t.key}${SHOW_EXPRESSIONS && t.expression ? `\n${" ".repeat(9)}${t.expression}` : ""}`);
    console.log("\nper run:");
    let rru = 0, wru = 0, ddb = 0;
    for (const [key, tally] of Object.entries(window.sdk)) {
      console.log(`  ${key.padEnd(36)} calls ${(tally.calls / runs).toFixed(1)}  RRU ${(tally.readUnits / runs).toFixed(1)}  WRU ${(tally.writeUnits / runs).toFixed(1)}  refused ${(tally.conditionFailures / runs).toFixed(1)}  billed ${(tally.billedRequests / runs).toFixed(1)}`);
      if (key.startsWith("dynamodb:")) { ddb += tally.calls; rru += tally.readUnits; wru += tally.writeUnits; }
    }
    console.log(`  DynamoDB: ${(ddb / runs).toFixed(1)} requests, ${(rru / runs).toFixed(1)} RRU, ${(wru / runs).toFixed(1)} WRU`);
    console.log(`  transitions ${(window.stateTransitions / runs).toFixed(1)}: ${JSON.stringify(window.transitionsByState)}`);
    console.log(`  lambda: ${JSON.stringify(window.lambda)}`);
    // Priced like figure 3 (connection minutes left out: a few ms per run).
    const usage = usagePerRun(window, runs, { inboundMessages: runs, connectionMinutes: 0 });
    const per1000 = scaleBreakdown(costOfRun(usage, configuredMemory(), PRICES), 1000);
    console.log(`  $ per 1000 runs: ${JSON.stringify(Object.fromEntries(Object.entries(per1000).map(([k, v]) => [k, Number(v.toFixed(5))])))}`);
    // The streaming goal's measure (figure 5): WebSocket posts plus every write unit of the run.
    const posts = (window.sdk["apigw-management:PostToConnection"]?.calls ?? 0) / runs;
    const streaming = 1000 * (posts * PRICES.apiGateway.perWebSocketMessage + (wru / runs) * PRICES.dynamodb.perWriteRequestUnit);
    console.log(`  WebSocket posts ${posts.toFixed(1)} + WRU ${(wru / runs).toFixed(1)}: $${streaming.toFixed(4)} per 1000 runs (the streaming goal's measure)`);
    await Promise.all([warm, ...clients].map((c) => c.close()));
  } finally {
    await stack.close();
    await model.close();
  }
}

main().then(() => process.exit(0), (error) => { console.error(error); process.exit(1); });
