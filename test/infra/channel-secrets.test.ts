import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FUNCTION_KEYS } from "../../infra/functions";
import { synthesizeTemplate, type CfnTemplate } from "../../infra/synth";
import { logicalIdOfFunction, resourcesOf, resourcesOfType, statementsFor, statementsOfFunction } from "./helpers";

/** With a channel configured (here: the `default` Telegram account from the environment), its secrets get their own secret. */
let json: CfnTemplate;
const ENV = { TELEGRAM_BOT_TOKEN: "123:secret-token", TELEGRAM_WEBHOOK_SECRET: "hook-secret", HOOKS_SECRET: "whsec_c2VjcmV0" };

beforeAll(() => {
  Object.assign(process.env, ENV);
  json = synthesizeTemplate({ bundling: false });
});
afterAll(() => {
  for (const key of Object.keys(ENV)) delete process.env[key];
});

describe("channel secrets in the template", () => {
  it("creates a ChannelSecrets secret of empty placeholders; no secret value reaches the template", () => {
    const secrets = resourcesOfType(json, "AWS::SecretsManager::Secret");
    const channel = secrets.find(([id]) => id.includes("ChannelSecrets"));
    expect(channel).toBeDefined();
    expect(JSON.parse(String(channel![1].Properties?.SecretString))).toEqual({
      "channels/telegram/default/botToken": "",
      "channels/telegram/default/webhookSecret": "",
      "channels/hooks/default/secret": "",
    });
    const text = JSON.stringify(json);
    for (const value of Object.values(ENV)) expect(text).not.toContain(value);
  });

  it("lets only rest-api, ws-api, attempt, run-finalize and the sweeper read it, through CHANNEL_SECRETS_ARN", () => {
    const [[channelId]] = resourcesOfType(json, "AWS::SecretsManager::Secret").filter(([id]) => id.includes("ChannelSecrets"));
    const readers = FUNCTION_KEYS.filter((key) =>
      statementsFor(statementsOfFunction(json, key), "secretsmanager:").some((s) => JSON.stringify(resourcesOf(s)).includes(channelId)),
    );
    // The sweeper ends dead runs and delivers their error reply to the channel (shared/sweeper/dead-runs.ts).
    // ws-api: aborting a channel message that has not started (or dropping one for the cap) answers its chat.
    expect(readers).toEqual(["rest-api", "ws-api", "attempt", "run-finalize", "sweeper"]);
    for (const key of readers) {
      const env = (json.Resources?.[logicalIdOfFunction(json, key)].Properties?.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(env.CHANNEL_SECRETS_ARN).toEqual({ Ref: channelId });
    }
  });
});
