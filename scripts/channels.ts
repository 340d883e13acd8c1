/**
 * Connect a real bot in minutes (docs/channels.md):
 *
 *   npm run channels -- telegram set-webhook <accountId> <publicUrl>
 *   npm run channels -- slack manifest <accountId> <publicUrl>
 *
 * The account comes from the same configuration the stack is synthesized
 * with (agent-runner.config.json / AGENT_RUNNER_CONFIG, and for `default`
 * TELEGRAM_BOT_TOKEN, TELEGRAM_WEBHOOK_SECRET, TELEGRAM_API_BASE_URL).
 */
import { resolveAgentConfig } from "../infra/agent-config";
import { createTelegramApi } from "../shared/channels/telegram-api";

function usage(): never {
  console.error("usage: npm run channels -- telegram set-webhook <accountId> <publicUrl>\n       npm run channels -- slack manifest <accountId> <publicUrl>");
  process.exit(2);
}

function endpoint(publicUrl: string, path: string): string {
  return `${publicUrl.replace(/\/$/, "")}${path}`;
}

async function telegramSetWebhook(accountId: string, publicUrl: string): Promise<void> {
  const account = resolveAgentConfig().config.channels.telegram.accounts[accountId];
  if (!account?.botToken) throw new Error(`telegram account ${accountId} has no botToken (set TELEGRAM_BOT_TOKEN for "default")`);
  if (!account.webhookSecret) throw new Error(`telegram account ${accountId} has no webhookSecret (set TELEGRAM_WEBHOOK_SECRET for "default")`);
  const url = endpoint(publicUrl, `/v1/channels/telegram/${encodeURIComponent(accountId)}`);
  const out = await createTelegramApi(account.apiBaseUrl, account.botToken).setWebhook({ url, secretToken: account.webhookSecret });
  if (!out.ok) throw new Error(out.error);
  console.log(`Telegram webhook of account ${accountId} set to ${url}`);
}

function slackManifest(accountId: string, publicUrl: string): void {
  const manifest = {
    display_information: { name: "agent-runner" },
    features: { bot_user: { display_name: "agent-runner", always_online: true } },
    oauth_config: { scopes: { bot: ["app_mentions:read", "chat:write", "im:history", "channels:history", "groups:history", "reactions:write"] } },
    settings: {
      event_subscriptions: {
        request_url: endpoint(publicUrl, `/v1/channels/slack/${encodeURIComponent(accountId)}`),
        bot_events: ["app_mention", "message.im", "message.channels", "message.groups"],
      },
      org_deploy_enabled: false,
      socket_mode_enabled: false,
    },
  };
  console.log(JSON.stringify(manifest, null, 2));
}

async function main(argv: string[]): Promise<void> {
  const [platform, command, accountId, publicUrl] = argv;
  if (!accountId || !publicUrl || !/^https?:\/\//.test(publicUrl)) usage();
  if (platform === "telegram" && command === "set-webhook") return telegramSetWebhook(accountId, publicUrl);
  if (platform === "slack" && command === "manifest") return slackManifest(accountId, publicUrl);
  usage();
}

main(process.argv.slice(2)).catch((error: Error) => {
  console.error(error.message);
  process.exit(1);
});
