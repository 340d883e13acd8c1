import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configSnapshotReader, publishConfigSnapshot } from "../../shared/aws/config-snapshots";
import { parseAgentConfig } from "../../shared/config/config";
import { splitSecrets } from "../../shared/config/deployed";
import { depsForConfigVersion, silentLog, type RunDeps } from "../../shared/run/deps";
import { startTestDb, type TestDb } from "../support/local-db";

let t: TestDb;
beforeAll(async () => {
  t = await startTestDb();
});
afterAll(async () => t?.close());

describe("a run keeps the configuration it was accepted under", () => {
  it("a task of a newer deployment loads the run's version from its snapshot, keys from its own secret", async () => {
    const older = splitSecrets(parseAgentConfig({ model: "openai/gpt-old", providers: { openai: { apiKey: "sk-old" } } }));
    const newer = splitSecrets(parseAgentConfig({ model: "openai/gpt-new" }));
    await publishConfigSnapshot(t.db, older.deployed.version, older.deployed.config);
    // Publishing again (another container of that deployment) changes nothing.
    await publishConfigSnapshot(t.db, older.deployed.version, { model: "tampered/x" });
    const deps = {
      db: t.db,
      config: parseAgentConfig(newer.deployed.config),
      configVersion: newer.deployed.version,
      configFor: configSnapshotReader(t.db, { OPENAI_API_KEY: "sk-current" }),
      log: silentLog,
    } as unknown as RunDeps;
    const forOld = await depsForConfigVersion(deps, older.deployed.version);
    expect(forOld.config.model).toBe("openai/gpt-old");
    expect(forOld.config.providers.openai.apiKey).toBe("sk-current");
    expect(forOld.configVersion).toBe(older.deployed.version);
    expect(await depsForConfigVersion(deps, newer.deployed.version)).toBe(deps);
    expect(await depsForConfigVersion(deps, undefined)).toBe(deps);
    await expect(depsForConfigVersion(deps, "0000000000000000")).rejects.toThrow(/configuration version 0000000000000000 is not in the table/);
  });
});
