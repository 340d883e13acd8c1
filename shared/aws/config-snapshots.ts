import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import type { AgentConfig } from "../config/config";
import { ConfigError } from "../config/config";
import { joinSecrets } from "../config/deployed";
import type { Db } from "./dynamo";
import { keys } from "./keys";

/**
 * Deployed configurations by version (content hash), immutable: written once
 * by the first function of a deployment that accepts runs, read by the tasks
 * of a run accepted under an older deployment. Keys are never stored here.
 */
export async function publishConfigSnapshot(db: Db, version: string, publicConfig: Record<string, unknown>): Promise<void> {
  try {
    await db.doc.send(
      new PutCommand({
        TableName: db.table,
        Item: { ...keys.configSnapshot(version), v: 1, version, config: JSON.stringify(publicConfig), createdAt: db.now() },
        ConditionExpression: "attribute_not_exists(pk)",
      }),
    );
  } catch (error) {
    // Already published by another container of this deployment: snapshots never change.
    if ((error as { name?: string }).name !== "ConditionalCheckFailedException") throw error;
  }
}

export function configSnapshotReader(db: Db, secrets: Record<string, string>): (version: string) => Promise<AgentConfig> {
  const cache = new Map<string, Promise<AgentConfig>>();
  return (version) => {
    let loaded = cache.get(version);
    if (!loaded) {
      loaded = readSnapshot(db, version, secrets);
      cache.set(version, loaded);
      loaded.catch(() => cache.delete(version));
    }
    return loaded;
  };
}

async function readSnapshot(db: Db, version: string, secrets: Record<string, string>): Promise<AgentConfig> {
  const out = await db.doc.send(new GetCommand({ TableName: db.table, Key: keys.configSnapshot(version) }));
  const stored = out.Item?.config;
  if (typeof stored !== "string") throw new ConfigError(`configuration version ${version} is not in the table`);
  return joinSecrets(JSON.parse(stored) as Record<string, unknown>, secrets);
}
