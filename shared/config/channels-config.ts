import * as z from "zod";

/**
 * Chat channels and signed inbound webhooks (issue 13). Secrets (bot tokens,
 * signing secrets) are cut out of the deployed configuration and live in the
 * runner's secret (shared/config/channel-secrets.ts); what stays is public.
 * For the account or hook id `default`, the environment variables of
 * docs/channels.md fill them in (applyChannelEnv).
 */
const MentionPolicySchema = z.enum(["always", "mention"]);

const TelegramAccountSchema = z
  .object({
    botToken: z.string().default(""),
    /** `secret_token` given to setWebhook; Telegram echoes it in X-Telegram-Bot-Api-Secret-Token. */
    webhookSecret: z.string().default(""),
    apiBaseUrl: z.string().url().default("https://api.telegram.org"),
    /** The bot's username (without @): group messages must mention it under policy `mention`. */
    botUsername: z.string().optional(),
    groupPolicy: MentionPolicySchema.default("mention"),
    editIntervalMs: z.number().int().min(0).max(60_000).default(1000),
    verbose: z.boolean().default(false),
  })
  .strict();

const SlackAccountSchema = z
  .object({
    signingSecret: z.string().default(""),
    botToken: z.string().default(""),
    apiBaseUrl: z.string().url().default("https://slack.com/api"),
    /** The bot's user id (U...): its own messages are ignored, channel messages must mention it under `mention`. */
    botUserId: z.string().optional(),
    channelPolicy: MentionPolicySchema.default("mention"),
    editIntervalMs: z.number().int().min(0).max(60_000).default(1000),
    verbose: z.boolean().default(false),
  })
  .strict();

const HookSchema = z
  .object({
    /** Standard Webhooks secret, `whsec_<base64>`. */
    secret: z.string().default(""),
  })
  .strict();

export const ChannelsConfigSchema = z
  .object({
    telegram: z.object({ accounts: z.record(z.string().regex(/^[A-Za-z0-9_-]{1,64}$/), TelegramAccountSchema).default({}) }).strict().prefault({}),
    slack: z.object({ accounts: z.record(z.string().regex(/^[A-Za-z0-9_-]{1,64}$/), SlackAccountSchema).default({}) }).strict().prefault({}),
    /** Generic inbound webhooks (`POST /v1/hooks/{hookId}`), Standard Webhooks signatures. */
    hooks: z.record(z.string().regex(/^[A-Za-z0-9_-]{1,64}$/), HookSchema).default({}),
    /** Reply URLs on loopback/private addresses (`npm start` and tests only; never in AWS). */
    allowPrivateReplyUrls: z.boolean().default(false),
  })
  .strict();
export type ChannelsConfig = z.infer<typeof ChannelsConfigSchema>;
export type TelegramAccount = z.infer<typeof TelegramAccountSchema>;
export type SlackAccount = z.infer<typeof SlackAccountSchema>;

type Env = Record<string, string | undefined>;

/** The environment variables of the account or hook id `default` (issue 13). */
export const CHANNEL_ENV_KEYS = [
  "TELEGRAM_BOT_TOKEN",
  "TELEGRAM_WEBHOOK_SECRET",
  "TELEGRAM_API_BASE_URL",
  "SLACK_SIGNING_SECRET",
  "SLACK_BOT_TOKEN",
  "SLACK_API_BASE_URL",
  "HOOKS_SECRET",
] as const;

/** Raw config (as in the file) + env -> raw config with the `default` account/hook filled from the environment. */
export function applyChannelEnv(base: Record<string, unknown>, env: Env): Record<string, unknown> {
  const channels = { ...((base.channels ?? {}) as Record<string, Record<string, unknown>>) };
  const telegram = withDefault(channels.telegram, { botToken: env.TELEGRAM_BOT_TOKEN, webhookSecret: env.TELEGRAM_WEBHOOK_SECRET, apiBaseUrl: env.TELEGRAM_API_BASE_URL });
  const slack = withDefault(channels.slack, { signingSecret: env.SLACK_SIGNING_SECRET, botToken: env.SLACK_BOT_TOKEN, apiBaseUrl: env.SLACK_API_BASE_URL });
  if (telegram) channels.telegram = telegram;
  if (slack) channels.slack = slack;
  if (env.HOOKS_SECRET) {
    const hooks = { ...((channels.hooks ?? {}) as Record<string, Record<string, unknown>>) };
    hooks.default = { ...(hooks.default ?? {}), secret: env.HOOKS_SECRET };
    channels.hooks = hooks;
  }
  return Object.keys(channels).length > 0 ? { ...base, channels } : base;
}

function withDefault(section: Record<string, unknown> | undefined, values: Record<string, string | undefined>): Record<string, unknown> | undefined {
  const given = Object.fromEntries(Object.entries(values).filter(([, v]) => v));
  if (Object.keys(given).length === 0) return section;
  const accounts = { ...((section?.accounts ?? {}) as Record<string, Record<string, unknown>>) };
  accounts.default = { ...(accounts.default ?? {}), ...given };
  return { ...(section ?? {}), accounts };
}
