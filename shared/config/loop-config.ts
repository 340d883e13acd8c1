import * as z from "zod";

/**
 * Configuration of the outer loop and of durable session state (issues 3
 * and 5): auth profiles per provider, compaction, and how long one Step
 * Functions execution runs before a long run continues in a fresh one.
 * Strict and fully defaulted, like the other sections.
 */

/**
 * Several credentials for one provider, in the order they are tried. When a
 * provider has none, its `apiKey` is the single profile `default`.
 */
export const AuthProfileSchema = z
  .object({
    id: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, "profile id: letters, digits, _ . - (max 64)"),
    /** Empty in a deployed configuration until the function that calls the provider fills it from its secret. */
    apiKey: z.string(),
  })
  .strict();
export type AuthProfileConfig = z.infer<typeof AuthProfileSchema>;

export const AuthProfilesSchema = z.array(AuthProfileSchema).min(1).optional();

export const CompactionConfigSchema = z
  .object({
    /** Bound on the summary call(s) of one compaction (OpenClaw `compaction.timeoutSeconds`). */
    timeoutSeconds: z.number().positive().default(180),
    /** Newest context kept verbatim (OpenClaw keepRecentTokens). */
    keepRecentTokens: z.number().int().min(0).default(20_000),
  })
  .strict();

export const LoopConfigSchema = z
  .object({
    /**
     * Loop iterations one Step Functions execution runs before the run continues
     * in a fresh execution (the 25,000-event history limit; ~9 events per iteration).
     */
    iterationsPerExecution: z.number().int().min(1).default(1500),
    /**
     * History events one execution may record before the run continues in a fresh one: Step
     * Functions' 25,000-event limit, counted by the path each iteration takes (core/history-budget.ts).
     * Lower only to test continue-as-new.
     */
    maxHistoryEvents: z.number().int().min(50).max(25_000).default(25_000),
  })
  .strict();
