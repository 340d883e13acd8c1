/**
 * What the edge authorizer adds to a REST request on the local stack:
 * `npx tsx bench/authorizer-latency.ts [samples]`.
 *
 * - uncached: a key the authorizer has not seen (a fresh key per request):
 *   API Gateway invokes the authorizer function (sandbox + one GetItem);
 * - cached: the same key again within the 300 s TTL: no invocation.
 * The authorizer's own invocation time is measured around the sandbox call;
 * end-to-end times are the same `GET /v1/runs/{id}` with either kind of key.
 * Prints medians and p95 in ms as JSON.
 */
import { startLocalStack } from "../infra/local/stack";
import { createApiKey } from "../shared/aws/api-keys";
import { loadAgentConfig } from "../shared/config/config";
import { percentile } from "./stats";

const samples = Number(process.argv[2] ?? 40);
const authorizerMs: number[] = [];
const stack = await startLocalStack({
  config: loadAgentConfig({}),
  observe: {
    aroundInvoke: async (key, invoke) => {
      if (key !== "authorizer") return invoke();
      const started = performance.now();
      try {
        return await invoke();
      } finally {
        authorizerMs.push(performance.now() - started);
      }
    },
  },
});
try {
  const timeGet = async (key: string) => {
    const started = performance.now();
    const response = await fetch(`${stack.restUrl}/v1/runs/run_missing`, { headers: { authorization: `Bearer ${key}` } });
    await response.text();
    if (response.status !== 404) throw new Error(`unexpected ${response.status}`);
    return performance.now() - started;
  };
  const warm = (await createApiKey(stack.deps.db, { tenantId: "bench", name: "warm", scopes: ["operator.read"] })).key;
  for (let i = 0; i < 10; i += 1) await timeGet(warm);
  const fresh = await Promise.all(Array.from({ length: samples }, (_, i) => createApiKey(stack.deps.db, { tenantId: "bench", name: `fresh-${i}`, scopes: ["operator.read"] })));
  authorizerMs.length = 0;
  const uncached: number[] = [];
  const cached: number[] = [];
  for (let i = 0; i < samples; i += 1) {
    uncached.push(await timeGet(fresh[i]!.key));
    cached.push(await timeGet(warm));
  }
  const summary = (values: number[]) => ({ p50: round(percentile(values, 50)), p95: round(percentile(values, 95)), n: values.length });
  console.log(JSON.stringify({ authorizerInvocation: summary(authorizerMs), requestUncachedKey: summary(uncached), requestCachedKey: summary(cached) }, null, 2));
} finally {
  await stack.close();
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}
