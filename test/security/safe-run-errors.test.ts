import { describe, expect, it } from "vitest";
import { FAILURE_KINDS } from "../../shared/core/failures";
import { USER_ERRORS } from "../../shared/core/loop-texts";
import { loopMeta } from "../../shared/run/run-trace";
import { failed, loopOf, repeatUntilSettled } from "../core/loop-helpers";

/**
 * Defect 8, the run's side: when the loop gives up on a provider failure,
 * what callers read (run.error, result.meta.error, the lifecycle error
 * event, the final `res`) is our text; the provider's message, which can
 * carry key fragments, account ids and ARNs, stays in `detail` for the log.
 */
const LEAKY = "Incorrect API key provided: sk-proj-abc123SECRET. Request req_9f in account 123456789012 (arn:aws:iam::123456789012:role/x)";

describe("a provider failure is surfaced in our words (defect 8)", () => {
  it.each(FAILURE_KINDS.filter((kind) => kind !== "aborted" && kind !== "context_overflow"))("%s: error and meta carry no provider text", (kind) => {
    const steps = repeatUntilSettled(loopOf(), failed(kind, { message: LEAKY, retryable: false }));
    const decision = steps.at(-1)!.decision as { action: string; status: string; error?: string; detail?: string; reason: string; errorKind?: string };
    expect(decision.action).toBe("finalize");
    expect(decision.error).toBeDefined();
    expect(decision.error).not.toMatch(/sk-proj|123456789012|arn:aws|req_9f/);
    const meta = loopMeta([], decision as Parameters<typeof loopMeta>[1], "openai/gpt-4o");
    expect(JSON.stringify(meta)).not.toMatch(/sk-proj|123456789012|arn:aws|req_9f/);
  });

  it("keeps the provider's message in the decision's detail, for the log", () => {
    const steps = repeatUntilSettled(loopOf(), failed("auth", { message: LEAKY, retryable: false }));
    expect(steps.at(-1)!.decision).toMatchObject({ error: USER_ERRORS.providerFailure("auth"), detail: LEAKY });
  });
});
