/**
 * Errors of the persistence adapters. Names are explicit because Step Functions
 * `Retry`/`Catch` and handlers match on them; test/infra/state-machine.test.ts ("pinned error names") pins them.
 */
export class SessionBusyError extends Error {
  override readonly name = "SessionBusyError";
  constructor(readonly sessionId: string, readonly holderRunId: string | undefined, waitedMs: number) {
    super(`session ${sessionId} is busy (writer ${holderRunId ?? "unknown"}); waited ${waitedMs} ms`);
  }
}

/** The writer claim was taken over (lease expired, another task claimed it): nothing was committed. */
export class WriterFencedError extends Error {
  override readonly name = "WriterFencedError";
  constructor(readonly sessionId: string, readonly runId: string) {
    super(`run ${runId} no longer holds the write claim of session ${sessionId}`);
  }
}

/**
 * The sweeper re-drove the run while this attempt ran (its execution had died
 * of the service): the attempt stops here, before any decision or finalize;
 * the re-drive's attempt carries the run on.
 */
export class RunSupersededError extends Error {
  override readonly name = "RunSupersededError";
  constructor(readonly runId: string, readonly generation: number) {
    super(`run ${runId} was re-driven (generation ${generation}) while this attempt ran`);
  }
}

/** A commit would break a transcript invariant; nothing was written. */
export class TranscriptInvariantError extends Error {
  override readonly name = "TranscriptInvariantError";
  constructor(readonly violations: string[]) {
    super(`transcript turn rejected: ${violations.join(", ")}`);
  }
}

export class ItemTooLargeError extends Error {
  override readonly name = "ItemTooLargeError";
}

export class RunNotFoundError extends Error {
  override readonly name = "RunNotFoundError";
  constructor(readonly runId: string) {
    super(`run ${runId} not found`);
  }
}

/** A session lane item kept changing under every conditional write; the caller's work is retried as a whole. */
export class LaneContentionError extends Error {
  override readonly name = "LaneContentionError";
  constructor(readonly sessionKey: string, attempts: number) {
    super(`session lane ${sessionKey} kept changing under ${attempts} conditional writes`);
  }
}
