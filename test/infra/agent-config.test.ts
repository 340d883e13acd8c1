import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { resolveAgentConfig } from "../../infra/agent-config";
import { joinSecrets } from "../../shared/config/deployed";

const dir = mkdtempSync(join(tmpdir(), "agent-config-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function configFile(content: object): string {
  const file = join(dir, `config-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(content));
  return file;
}

describe("the configuration resolved at synth", () => {
  it("context model wins over the environment, which wins over the file", () => {
    const file = configFile({ model: "anthropic/claude-sonnet-4-5" });
    expect(resolveAgentConfig({ config: file, processEnv: {} }).config.model).toBe("anthropic/claude-sonnet-4-5");
    expect(resolveAgentConfig({ config: file, processEnv: { MODEL: "openai/gpt-4o" } }).config.model).toBe("openai/gpt-4o");
    expect(resolveAgentConfig({ config: file, model: "openai/gpt-4.1-mini", processEnv: { MODEL: "openai/gpt-4o" } }).config.model).toBe("openai/gpt-4.1-mini");
  });

  it("cuts every key out of what is deployed and names each secret value, profiles included", () => {
    const file = configFile({
      model: "openai/gpt-main",
      fallbackModels: ["openai/gpt-fallback"],
      providers: { openai: { baseURL: "http://127.0.0.1:9/v1", profiles: [{ id: "key-a", apiKey: "sk-a" }, { id: "key-b", apiKey: "sk-b" }] } },
    });
    const resolved = resolveAgentConfig({ config: file, processEnv: { ANTHROPIC_API_KEY: "sk-ant" } });
    expect(JSON.stringify(resolved.deployed)).not.toMatch(/sk-a|sk-b|sk-ant/);
    expect(resolved.deployed.secretKeys).toEqual(["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "openai/key-a", "openai/key-b"]);
    expect(resolved.secretValues).toEqual({ ANTHROPIC_API_KEY: "sk-ant", "openai/key-a": "sk-a", "openai/key-b": "sk-b" });
    // What a function holding the secret runs with; one without it still knows both profiles.
    const joined = joinSecrets(resolved.deployed.config, resolved.secretValues);
    expect(joined.providers.openai.profiles).toEqual([{ id: "key-a", apiKey: "sk-a" }, { id: "key-b", apiKey: "sk-b" }]);
    expect(joinSecrets(resolved.deployed.config, {}).providers.openai.profiles?.map((p) => p.id)).toEqual(["key-a", "key-b"]);
  });

  it("versions what is deployed by its content", () => {
    const a = resolveAgentConfig({ config: configFile({ model: "openai/gpt-a" }), processEnv: {} });
    const again = resolveAgentConfig({ config: configFile({ model: "openai/gpt-a" }), processEnv: {} });
    const b = resolveAgentConfig({ config: configFile({ model: "openai/gpt-b" }), processEnv: {} });
    expect(a.deployed.version).toBe(again.deployed.version);
    expect(a.deployed.version).not.toBe(b.deployed.version);
  });

  it("a plugin module that does not exist fails at synth with the path it looked for", () => {
    const file = configFile({ plugins: ["./plugins/missing.ts"] });
    expect(() => resolveAgentConfig({ config: file, processEnv: {} })).toThrow(/plugin module not found: "\.\/plugins\/missing\.ts" \(looked for .*plugins\/missing\.ts\) named in .*config-/);
  });

  it("a named workspace folder that does not exist fails at synth", () => {
    expect(() => resolveAgentConfig({ config: configFile({ workspace: { dir: "./nowhere" } }), processEnv: {} })).toThrow(/workspace folder not found/);
  });
});
