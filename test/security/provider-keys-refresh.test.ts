import { PutSecretValueCommand, SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_CREDENTIALS, LOCAL_REGION, startLocalStack, type LocalStack } from "../../infra/local/stack";
import { loadAgentConfig } from "../../shared/config/config";
import { chat, FakeOpenAIServer } from "../support/fake-openai-server";

/**
 * Defect 4, through the template-deployed stack: the attempt function reads
 * the provider keys at its cold start. A failed read must not stick to the
 * warm container, and a key put into the secret after the deploy must be
 * seen once the cached one is older than `secrets.maxAgeSeconds`.
 * One sandbox per function, so every run lands on the same warm container.
 */
let stack: LocalStack;
let oai: FakeOpenAIServer;
let secrets: SecretsManagerClient;

beforeAll(async () => {
  oai = await FakeOpenAIServer.start();
  const config = loadAgentConfig({ OPENAI_API_KEY: "key-one", OPENAI_BASE_URL: oai.baseURL, MODEL: "openai/gpt-4o" });
  stack = await startLocalStack({ config: { ...config, secrets: { maxAgeSeconds: 0 } }, maxConcurrency: 1, sweepIntervalMs: 0, env: { OPENAI_API_KEY: "key-one" } });
  secrets = new SecretsManagerClient({ region: LOCAL_REGION, endpoint: stack.endpoints.edge, credentials: ADMIN_CREDENTIALS });
});
afterAll(async () => {
  secrets?.destroy();
  await stack?.close();
  await oai?.close();
});

const secretArn = () => stack.outputs.ProviderKeysSecretArn!;
const putKeys = (text: string) => secrets.send(new PutSecretValueCommand({ SecretId: secretArn(), SecretString: text }));

async function runToEnd(message: string): Promise<{ status: string }> {
  const headers = { authorization: `Bearer ${stack.authToken}`, "content-type": "application/json" };
  const accepted = await fetch(`${stack.restUrl}/v1/agent`, { method: "POST", headers, body: JSON.stringify({ sessionKey: `keys-${message}`, message }) });
  const { runId } = (await accepted.json()) as { runId: string };
  for (;;) {
    const waited = await fetch(`${stack.restUrl}/v1/runs/${runId}/wait`, { method: "POST", headers, body: JSON.stringify({ timeoutMs: 20_000 }) });
    const body = (await waited.json()) as { status: string };
    if (body.status !== "timeout") return body;
  }
}

const lastAuthorization = () => oai.requests.at(-1)?.headers.authorization;

describe("provider keys: a failed cold-start read is retried, and the keys refresh by age (defect 4)", () => {
  it("recovers from an unreadable secret without a new container, then sees rotated keys", async () => {
    await putKeys("not json {");
    const failed = await runToEnd("first");
    expect(failed.status).toBe("error");
    expect(oai.requests).toHaveLength(0);

    await putKeys(JSON.stringify({ OPENAI_API_KEY: "key-two", ANTHROPIC_API_KEY: "" }));
    oai.enqueue(chat.text("two"));
    expect(await runToEnd("second")).toMatchObject({ status: "ok" });
    expect(lastAuthorization()).toBe("Bearer key-two");

    await putKeys(JSON.stringify({ OPENAI_API_KEY: "key-three", ANTHROPIC_API_KEY: "" }));
    oai.enqueue(chat.text("three"));
    expect(await runToEnd("third")).toMatchObject({ status: "ok" });
    expect(lastAuthorization()).toBe("Bearer key-three");

    // A broken value put later does not break the warm container: it keeps the keys it has.
    await putKeys("still not json");
    oai.enqueue(chat.text("four"));
    expect(await runToEnd("fourth")).toMatchObject({ status: "ok" });
    expect(lastAuthorization()).toBe("Bearer key-three");
  }, 240_000);
});
