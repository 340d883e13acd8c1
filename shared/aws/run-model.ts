import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { Db } from "./dynamo";
import { keys } from "./keys";

/**
 * The run's model, replaced before its first attempt (a before_model_resolve
 * hook chose another one). Only while the run is running: the loop state is
 * built from this model right after, in the same task.
 */
export async function setRunModel(db: Db, runId: string, model: string): Promise<void> {
  await db.doc.send(
    new UpdateCommand({
      TableName: db.table,
      Key: keys.run(runId),
      UpdateExpression: "SET #model = :model",
      ConditionExpression: "attribute_exists(pk)",
      ExpressionAttributeNames: { "#model": "model" },
      ExpressionAttributeValues: { ":model": model },
    }),
  );
}
