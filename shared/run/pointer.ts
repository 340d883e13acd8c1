import * as z from "zod";
import { DecisionSchema, LoopStateSchema } from "../core/run-loop";
import { RunIdSchema } from "../protocol/ids";

/**
 * What flows through Step Functions between tasks: ids, counters and the next
 * decision — never transcripts. Every task parses its input with these.
 */
/** StartRun: `{runId}` from StartExecution, or `{runId, loop}` when a long run continues in a fresh execution. */
export const StartInputSchema = z.lazy(() => z.object({ runId: RunIdSchema, loop: LoopStateSchema.optional() }));

export const LoopPointerSchema = z.lazy(() => z.object({ runId: RunIdSchema, loop: LoopStateSchema }));
export type LoopPointer = z.infer<typeof LoopPointerSchema>;

export const StepPointerSchema = z.lazy(() => LoopPointerSchema.unwrap().extend({ decision: DecisionSchema }));
export type StepPointer = z.infer<typeof StepPointerSchema>;

/** Attempt: the loop and the decision that led here (a compaction or truncation runs before the model). */
export const AttemptInputSchema = z.lazy(() => LoopPointerSchema.unwrap().extend({ decision: DecisionSchema.optional() }));

/**
 * The Attempt task's input: an attempt step, or the execution's input itself
 * (`{runId}`: the run-start prelude runs first, in the same task; `{runId, loop}`
 * when a long run continues as new). See shared/run/folded-step.ts.
 */
export const FoldedAttemptInputSchema = z.lazy(() => z.object({
  runId: RunIdSchema,
  loop: LoopStateSchema.optional(),
  decision: DecisionSchema.optional(),
  entry: entrySchema(),
}));
export type FoldedAttemptInput = z.infer<typeof FoldedAttemptInputSchema>;

/**
 * The run machine's execution name (`$$.Execution.Name`), which its tasks get
 * and the loop machine's never do: a task with it hands an unfinished run to
 * the loop machine (shared/run/hand-off.ts).
 */
const entrySchema = () => z.string().min(1).max(80).optional();

/** The Catch block's `{Error, Cause}` as Step Functions puts it at `$.crash`. */
export const CrashSchema = z.lazy(() => z.object({ Error: z.string(), Cause: z.string().optional() }));

export const RecoverInputSchema = z.lazy(() => z.object({
  runId: RunIdSchema,
  loop: LoopStateSchema.optional(),
  crash: CrashSchema,
  entry: entrySchema(),
}));
export type RecoverInput = z.infer<typeof RecoverInputSchema>;

/**
 * FinalizeRun's input: normally a step with a `finalize` decision; when even
 * the recovery task failed, Step Functions' Catch delivers `{runId, crash}`
 * (and whatever else the state held), and the run must still end cleanly.
 */
export const FinalizeInputSchema = z.lazy(() => z.object({
  runId: RunIdSchema,
  loop: LoopStateSchema.optional(),
  decision: DecisionSchema.optional(),
  crash: CrashSchema.optional(),
}));
export type FinalizeInput = z.infer<typeof FinalizeInputSchema>;
