import type { Db } from "../../shared/aws/dynamo";
import { LaneHarness } from "../lanes/harness";
import { testConfig, type Tables } from "../lanes/support";

export type Sent = { name: string; sk: string };
export type Hook = (sent: Sent) => Promise<void>;

/** The table, with every request on the global lane's partition recorded, and an optional hook awaited before each is sent. */
export function watchingLane(db: Db) {
  const sent: Sent[] = [];
  const state: { before?: Hook } = {};
  const doc = {
    send: async (command: { constructor: { name: string }; input: { Key?: { pk?: string; sk?: string }; Item?: { pk?: string; sk?: string }; ExpressionAttributeValues?: Record<string, unknown> } }) => {
      const key = command.input.Key ?? command.input.Item;
      const pk = key?.pk ?? command.input.ExpressionAttributeValues?.[":pk"];
      if (typeof pk === "string" && pk.startsWith("GLANE#")) {
        const entry = { name: command.constructor.name, sk: String(key?.sk ?? "(query)") };
        const hook = state.before;
        if (hook) await hook(entry);
        sent.push(entry);
      }
      return db.doc.send(command as never);
    },
  };
  return { sent, state, db: { ...db, doc } as unknown as Db };
}

/** A global lane of one slot, held by a running run of session `<prefix>-a`. */
export async function oneSlotHeld(tables: Tables, prefix: string) {
  const base = await tables.fresh();
  const h = new LaneHarness(base, testConfig({ globalCap: 1 }));
  const holder = await h.accept(`${prefix}-a`, "first");
  await h.dispatch();
  await h.start(holder.runId);
  return { base, h, holder };
}
