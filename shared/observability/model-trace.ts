import { MODEL_CALL_SUBSEGMENT } from "./names";
import { powertools } from "./powertools";
import { recordTimeToFirstToken } from "./run-metrics";

export interface ModelCallFacts {
  provider: string;
  model: string;
}

export interface ModelCallUsage {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
}

/**
 * One model call as an X-Ray subsegment (`## model call`, annotations
 * `provider`, `model`, `inputTokens`, `outputTokens`), plus the
 * time-to-first-token metric. With tracing off (locally, or the construct's
 * `tracing: false`) only the metric is kept.
 */
export async function traceModelCall<T>(facts: ModelCallFacts, call: (firstToken: () => void) => Promise<T>, usageOf: (result: T) => ModelCallUsage | undefined): Promise<T> {
  const startedAt = Date.now();
  let sawToken = false;
  const firstToken = () => {
    if (sawToken) return;
    sawToken = true;
    recordTimeToFirstToken(Date.now() - startedAt);
  };
  const { tracer } = powertools();
  const parent = tracer?.isTracingEnabled() ? tracer.getSegment() : undefined;
  if (!tracer || !parent) return call(firstToken);
  const subsegment = parent.addNewSubsegment(MODEL_CALL_SUBSEGMENT);
  tracer.setSegment(subsegment);
  subsegment.addAnnotation("provider", facts.provider);
  subsegment.addAnnotation("model", facts.model);
  try {
    const result = await call(firstToken);
    const usage = usageOf(result);
    if (usage) {
      subsegment.addAnnotation("inputTokens", usage.input);
      subsegment.addAnnotation("outputTokens", usage.output);
      subsegment.addMetadata("usage", usage);
    }
    return result;
  } catch (error) {
    subsegment.addError(error as Error);
    throw error;
  } finally {
    subsegment.close();
    tracer.setSegment(parent);
  }
}
