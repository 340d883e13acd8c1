import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EdgeCall } from "../../infra/local/aws-edge";
import { unexpectedEnvReads } from "../../infra/local/lambda/env-reads";
import { startLocalStack, type LocalStack } from "../../infra/local/stack";
import { getRun } from "../../shared/aws/runs";
import { chat, FakeOpenAIServer } from "../support/fake-openai-server";
import { HookRecorder } from "../support/hook-recorder";
import { RUN_END_TIMEOUT_MS } from "../support/timeouts";
import { until } from "../support/until";

/**
 * Issue 19: what `cdk deploy` deploys is what runs locally. The stack here is
 * synthesized from a config file and the environment (as `npm start` does),
 * deployed onto the emulators, and every part of the configuration must reach
 * the function that needs it through the template and its assets only.
 */
const KEY = "sk-parity-key-never-in-the-template";
let dir: string;
let oai: FakeOpenAIServer;
let hooks: HookRecorder;
let stack: LocalStack;

const auth = () => ({ authorization: `Bearer ${stack.authToken}`, "content-type": "application/json" });

async function runToEnd(base: string, message: string, sessionKey: string): Promise<string> {
  const accepted = await fetch(`${base}/v1/agent`, { method: "POST", headers: auth(), body: JSON.stringify({ sessionKey, message }) });
  const { runId } = (await accepted.json()) as { runId: string };
  // Each wait answers within 20 s; `timeout` without an end means "not yet" (a cold first run on a loaded machine).
  const deadline = Date.now() + RUN_END_TIMEOUT_MS;
  for (;;) {
    const waited = await fetch(`${base}/v1/runs/${runId}/wait`, { method: "POST", headers: auth(), body: JSON.stringify({ timeoutMs: 20_000 }) });
    const result = (await waited.json()) as { status: string; endedAt?: number };
    if (result.status === "timeout" && result.endedAt === undefined && Date.now() < deadline) continue;
    expect(result.status).toBe("ok");
    return runId;
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "agent-runner-parity-"));
  oai = await FakeOpenAIServer.start();
  hooks = await HookRecorder.start();
  mkdirSync(join(dir, "workspace"));
  writeFileSync(join(dir, "workspace", "AGENTS.md"), "Always answer like a pirate.\n");
  writeFileSync(join(dir, "agent-runner.config.json"), JSON.stringify({ plugins: [hooks.plugin(["session_start"])], workspace: { dir: "./workspace" } }));
  stack = await startLocalStack({
    configFile: join(dir, "agent-runner.config.json"),
    env: { MODEL: "openai/gpt-4.1-mini", OPENAI_BASE_URL: oai.baseURL, OPENAI_API_KEY: KEY },
  });
});

afterAll(async () => {
  await stack?.close();
  await oai?.close();
  await hooks?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("one configuration for both worlds", () => {
  it("the configured model answers, with the key from Secrets Manager, the workspace and the plugin's tool", async () => {
    oai.enqueue(chat.text("Arr, hello."));
    const runId = await runToEnd(stack.restUrl, "hello", "parity-1");
    const request = oai.requests.at(-1)!;
    const body = request.body as { model: string; messages: { role: string; content: string }[]; tools?: { function: { name: string } }[] };
    expect(request.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(body.model).toBe("gpt-4.1-mini");
    expect(body.messages.find((m) => m.role === "system")?.content).toContain("Always answer like a pirate.");
    expect(body.tools?.map((t) => t.function.name)).toContain("plugin_echo");
    const run = await getRun(stack.deps.db, runId);
    // Stamped by the intake function, from the configuration shipped with its code.
    expect(run).toMatchObject({ model: "openai/gpt-4.1-mini", configVersion: stack.outputs.ConfigVersion });
    expect(hooks.of("session_start", (e) => e.sessionKey === "parity-1")).toHaveLength(1);
  });

  it("keys never enter the template or the assets", () => {
    const assetDirs = new Set(Object.values(stack.functions).map((fn) => fn.environment.LAMBDA_TASK_ROOT));
    const files = [join(stack.assembly.dir, "AgentRunner.template.json"), ...[...assetDirs].map((d) => join(d, "agent-config.json"))];
    expect(assetDirs.size).toBeGreaterThan(1);
    for (const file of files) expect(readFileSync(file, "utf8")).not.toContain(KEY);
  });

  it("no function reads configuration its template environment does not give it", () => {
    for (const [key, fn] of Object.entries(stack.functions)) {
      expect({ key, reads: unexpectedEnvReads(fn.pool.missingEnvReads) }).toEqual({ key, reads: [] });
    }
    // The guard itself: wave 1's bug (the intake reading MODEL) would be reported.
    expect(unexpectedEnvReads(["MODEL", "TABLE_NAME", "AWS_REGION"])).toEqual(["MODEL", "TABLE_NAME"]);
  });

  it("runs each function in its own sandboxes with exactly its template environment", () => {
    const template = JSON.parse(readFileSync(join(stack.assembly.dir, "AgentRunner.template.json"), "utf8")) as { Resources: Record<string, { Type: string; Properties: { Environment?: { Variables: Record<string, unknown> } } }> };
    for (const fn of Object.values(stack.functions)) {
      const declared = Object.keys(template.Resources[fn.logicalId].Properties.Environment?.Variables ?? {});
      const ours = Object.keys(fn.environment).filter((name) => !/^(AWS_|LAMBDA_|_HANDLER$|TZ$|LANG$|PATH$)/.test(name));
      expect(ours.sort()).toEqual(declared.sort());
      expect(fn.environment.MODEL).toBeUndefined();
    }
  });
});

describe("the artifact that ships is the artifact that is tried", () => {
  let assembly: string;
  let edited: LocalStack | undefined;
  const denied: EdgeCall[] = [];

  beforeAll(() => {
    assembly = join(dir, "cdk.out");
    // The CDK CLI itself, as a pipeline would run it.
    const synth = spawnSync("npx", ["cdk", "synth", "--quiet", "-o", assembly], { encoding: "utf8", env: { ...process.env, AGENT_RUNNER_CONFIG: "", MODEL: "" } });
    expect(synth.status, synth.stderr).toBe(0);
  }, 120_000);
  afterAll(async () => edited?.close());

  it("a template whose dispatcher lost states:StartExecution fails on exactly that call", async () => {
    const templateFile = join(assembly, "AgentRunner.template.json");
    const template = JSON.parse(readFileSync(templateFile, "utf8")) as { Resources: Record<string, { Type: string; Properties: Record<string, any> }> };
    const policy = Object.entries(template.Resources).find(([id, r]) => r.Type === "AWS::IAM::Policy" && id.includes("Dispatcher"))![1];
    const before = policy.Properties.PolicyDocument.Statement.length;
    policy.Properties.PolicyDocument.Statement = policy.Properties.PolicyDocument.Statement.filter((s: { Action: unknown }) => s.Action !== "states:StartExecution");
    expect(policy.Properties.PolicyDocument.Statement.length).toBe(before - 1);
    writeFileSync(templateFile, JSON.stringify(template));

    edited = await startLocalStack({ assemblyDir: assembly, sweepIntervalMs: 0, observe: { onEdgeCall: (call) => call.denied && denied.push(call) } });
    const accepted = await fetch(`${edited.restUrl}/v1/agent`, { method: "POST", headers: { authorization: `Bearer ${edited.authToken}`, "content-type": "application/json" }, body: JSON.stringify({ sessionKey: "iam-1", message: "hello" }) });
    expect(accepted.status).toBe(202);
    const { runId } = (await accepted.json()) as { runId: string };
    // The dispatcher's call comes when the queue delivers and its sandbox has started: wait for it, not for 10 s.
    await until(async () => (denied.length > 0 ? true : undefined), "the dispatcher's denied StartExecution", RUN_END_TIMEOUT_MS);
    expect(denied[0]).toMatchObject({ service: "states", action: "states:StartExecution", statusCode: 400 });
    expect(denied[0].principalArn).toMatch(/assumed-role\/.*Dispatcher.*\/AgentRunner-RunnerDispatcherFn/);
    expect(JSON.parse(denied[0].responseBody.toString())).toMatchObject({ __type: expect.stringMatching(/AccessDeniedException$/), message: expect.stringContaining("is not authorized to perform: states:StartExecution") });
    expect(new Set(denied.map((call) => call.action))).toEqual(new Set(["states:StartExecution"]));
    expect((await getRun(edited.deps.db, runId))?.status).toBe("accepted");
    expect(readdirSync(assembly)).toContain("manifest.json");
  });
});
