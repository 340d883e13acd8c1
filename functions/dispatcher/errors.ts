/** A queue message that can never be processed: it fails (and reaches the DLQ) with this reason. */
export class PoisonMessageError extends Error {
  override readonly name = "PoisonMessageError";
}
