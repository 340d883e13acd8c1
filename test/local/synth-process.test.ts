import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { COMPLETE_MARKER } from "../../infra/local/assembly-cache";
import { prepareAssembly } from "../../infra/local/prepare-assembly";

const folders: string[] = [];
afterEach(() => {
  for (const dir of folders.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "synth-process-test-"));
  folders.push(dir);
  return dir;
}

/** What `npm start` does on its first start: the assembly synthesized in a child process, into the cache. */
describe("synthesis in a child process (npm start)", () => {
  it("writes a complete cache entry and answers the resolved configuration and its local secrets", async () => {
    const data = dataDir();
    const env = { MODEL: "openai/gpt-4o-mini", OPENAI_API_KEY: "sk-local-only" };
    const first = await prepareAssembly({ dataDir: data, synthInChild: true, env });
    expect(first.cached).toBe(true);
    expect(first.dir.startsWith(join(data, "assembly-cache"))).toBe(true);
    expect(existsSync(join(first.dir, COMPLETE_MARKER))).toBe(true);
    const template = readdirSync(first.dir).find((name) => name.endsWith(".template.json"));
    expect(template).toBeDefined();
    // The secret fills the local secret at start; it never reaches the template.
    expect(readFileSync(join(first.dir, template!), "utf8")).not.toContain("sk-local-only");
    expect(first.secretValues.OPENAI_API_KEY).toBe("sk-local-only");
    expect(first.config.model).toBe("openai/gpt-4o-mini");

    // The next start finds it: no synthesis, the same entry.
    const second = await prepareAssembly({ dataDir: data, synthInChild: true, env });
    expect(second.dir).toBe(first.dir);
  });

  it("rejects with the child's own error when synthesis fails there", async () => {
    // Without a data folder nothing is resolved first, so the invalid configuration reaches the child.
    await expect(prepareAssembly({ synthInChild: true, config: { model: 42 }, env: {} })).rejects.toThrow(
      /^synthesis failed: invalid agent configuration[\s\S]*at model/,
    );
  });
});
