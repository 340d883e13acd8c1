import * as z from "zod";

/**
 * Configuration sections of the attempt (issue 4): context budget, workspace
 * (bootstrap files and skills), tools, declared hooks, spend budgets and
 * prices. Kept apart from config.ts so that file stays a readable table of
 * contents; each section is strict and fully defaulted (`prefault` parses the
 * empty object through the schema, so inner defaults apply).
 */
const MODEL_REF = /^[a-z0-9-]+\/.+$/;

export const ContextConfigSchema = z
  .object({
    /** Effective window = min(this, the model's window from `modelContextWindows`). OpenClaw default 200000. */
    contextTokens: z.number().int().min(1000).default(200_000),
    /** Tokens kept free for the answer and for compaction when the precheck sizes the prompt. */
    reserveTokens: z.number().int().min(0).default(20_000),
    /** Keep only the last N user turns of history in the prompt (0 = all). */
    historyTurnLimit: z.number().int().min(0).default(0),
    /** `provider/model` -> context window in tokens, for models smaller than `contextTokens`. */
    modelContextWindows: z.record(z.string().regex(MODEL_REF), z.number().int().min(1000)).default({}),
  })
  .strict();

export const WorkspaceConfigSchema = z
  .object({
    /**
     * Where bootstrap files (AGENTS.md, SOUL.md, IDENTITY.md, USER.md, MEMORY.md) and skills
     * (`skills/<name>/SKILL.md`) come from: `auto` = the directory `dir` when set, else the
     * workspace item in the table (how AWS is configured); `none` = no workspace.
     */
    source: z.enum(["auto", "dir", "table", "none"]).default("auto"),
    dir: z.string().min(1).optional(),
    bootstrapMaxChars: z.number().int().min(100).default(20_000),
    bootstrapTotalMaxChars: z.number().int().min(100).default(60_000),
    maxSkillsPromptChars: z.number().int().min(0).default(30_000),
  })
  .strict();

const CustomToolSchema = z
  .object({
    name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/),
    description: z.string().min(1),
    /** JSON Schema of the arguments (validated before every call). */
    parameters: z.record(z.string(), z.unknown()).default({ type: "object", properties: {} }),
    /** The tool's arguments are POSTed as JSON; the response body is the result. */
    url: z.string().url(),
    method: z.enum(["POST", "PUT"]).default("POST"),
    headers: z.record(z.string(), z.string()).default({}),
    /** Side effects: the call goes through the tool-call ledger and is never blindly re-run. */
    mutating: z.boolean().default(true),
    timeoutSeconds: z.number().positive().max(300).default(30),
  })
  .strict();
export type CustomToolConfig = z.infer<typeof CustomToolSchema>;

export const BUILTIN_TOOL_NAMES = ["calculator", "current_time", "http_fetch", "read_skill"] as const;

export const ToolsConfigSchema = z
  .object({
    builtin: z.array(z.enum(BUILTIN_TOOL_NAMES)).default(["calculator", "current_time", "http_fetch", "read_skill"]),
    /** Any single tool call is cut (error result) after this long. */
    timeoutSeconds: z.number().positive().max(840).default(120),
    httpFetch: z
      .object({
        maxBytes: z.number().int().positive().default(1_000_000),
        timeoutSeconds: z.number().positive().max(120).default(15),
        maxRedirects: z.number().int().min(0).max(10).default(3),
      })
      .strict()
      .prefault({}),
    custom: z.array(CustomToolSchema).default([]),
    /**
     * Tool names (exact, or a `prefix*`) whose calls wait for a human's approval
     * (docs/approvals.md); `{tool, timeoutSeconds}` sets that tool's deadline (default 300 s).
     */
    requireApproval: z
      .array(z.union([z.string().min(1), z.object({ tool: z.string().min(1), timeoutSeconds: z.number().int().positive().max(86_400) }).strict()]))
      .default([]),
  })
  .strict();

const ToolPolicySchema = z
  .object({
    /** Tool names; a trailing `*` matches a prefix. */
    tools: z.array(z.string().min(1)).min(1),
    reason: z.string().optional(),
    priority: z.number().int().default(0),
  })
  .strict();

export const HooksConfigSchema = z
  .object({
    /** before_tool_call rules that block the named tools. */
    blockTools: z.array(ToolPolicySchema).default([]),
    /** before_prompt_build: stable guidance placed around the system prompt. */
    prependSystemContext: z.string().optional(),
    appendSystemContext: z.string().optional(),
    /** before_prompt_build: only these tools are offered. */
    toolsAllow: z.array(z.string()).optional(),
  })
  .strict();

const SpendBudgetSchema = z
  .object({ maxTokens: z.number().int().positive().optional(), maxCostUsd: z.number().positive().optional() })
  .strict();

/**
 * A run that loops (160 iterations of a full 100k-token context is 16M tokens)
 * stops here unless the configuration says otherwise: a default ceiling, so
 * one runaway run cannot spend without bound. Setting `budgets.run` replaces it.
 */
export const DEFAULT_RUN_MAX_TOKENS = 10_000_000;

export const BudgetsConfigSchema = z
  .object({ run: SpendBudgetSchema.prefault({ maxTokens: DEFAULT_RUN_MAX_TOKENS }), session: SpendBudgetSchema.prefault({}) })
  .strict();

/** USD per million tokens, per `provider/model`. Models without a price cost 0 (tokens still count). */
export const PricingConfigSchema = z.record(
  z.string().regex(MODEL_REF),
  z
    .object({ input: z.number().min(0), output: z.number().min(0), cacheRead: z.number().min(0).optional(), cacheWrite: z.number().min(0).optional() })
    .strict(),
);

export type ContextConfig = z.infer<typeof ContextConfigSchema>;
export type WorkspaceConfig = z.infer<typeof WorkspaceConfigSchema>;
export type ToolsConfig = z.infer<typeof ToolsConfigSchema>;
export type HooksConfig = z.infer<typeof HooksConfigSchema>;
export type BudgetsConfig = z.infer<typeof BudgetsConfigSchema>;
