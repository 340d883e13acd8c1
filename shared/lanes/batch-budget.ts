import { byteSize } from "../aws/dynamo";
import type { RunRecord } from "../aws/runs";
import { composeRunMessage } from "../core/lanes";

/**
 * The most a run record may weigh once a collect batch is written into it:
 * DynamoDB refuses items past 400 KB, and the record still gains its result
 * (the reply and its meta) when the run ends. A batch that would pass this
 * is cut, in lane order: the messages past the cut stay waiting and start
 * the next run, so nothing accepted is lost and the lane keeps moving (a
 * record past 400 KB made every later pump and sweep throw).
 */
export const MAX_BATCHED_RUN_BYTES = 300 * 1024;

/** True when the owner's record, with `members` and `notes` folded in, stays within the budget. */
export function batchFits(owner: RunRecord, own: string, members: readonly RunRecord[], notes: readonly string[]): boolean {
  const texts = members.map((member) => member.ownMessage ?? member.message);
  const record = { ...owner, message: composeRunMessage(own, texts, notes), ownMessage: own, batch: members.map((m) => m.runId) };
  return byteSize(record) <= MAX_BATCHED_RUN_BYTES;
}
