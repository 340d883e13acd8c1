/**
 * Drives the lane code the way the deployed pieces do, without Step
 * Functions: intake (acceptRun), the dispatcher (admitRun per queued
 * pointer), a run's start (StartRun marks it running) and its end
 * (run-finalize marks it ended and hands the lane off).
 */
import { getLane } from "../../shared/aws/lanes";
import { getRun, markEnded, markRunning, type RunRecord } from "../../shared/aws/runs";
import type { Db } from "../../shared/aws/dynamo";
import type { AgentConfig } from "../../shared/config/config";
import { acceptRun, type AcceptedRun } from "../../shared/intake/intake";
import { handOffLane } from "../../shared/lanes/handoff";
import { admitRun } from "../../shared/lanes/pump";
import type { AgentRequest } from "../../shared/protocol/agent-request";
import { FakeExecutions, nullPusher, RecordingQueue } from "./support";
import { silentLog } from "../../shared/run/deps";

export class LaneHarness {
  readonly queue = new RecordingQueue();
  readonly executions = new FakeExecutions();
  private dispatched = 0;

  constructor(readonly db: Db, readonly config: AgentConfig) {}

  get deps() {
    return { db: this.db, config: this.config, executions: this.executions, queue: this.queue, pusher: nullPusher, log: silentLog };
  }

  /** Same deps, another Db (a crashing one). */
  with(db: Db) {
    return { ...this.deps, db };
  }

  accept(sessionKey: string, message: string, extra: Partial<AgentRequest> = {}): Promise<AcceptedRun> {
    return acceptRun(this.deps, { sessionKey, message, ...extra }, "rest");
  }

  /** Delivers every pointer intake sent since the last call, in order. */
  async dispatch(db: Db = this.db): Promise<void> {
    for (const message of this.queue.sent.slice(this.dispatched)) {
      const run = await getRun(this.db, message.runId);
      if (run) await admitRun(this.with(db), run);
      this.dispatched += 1;
    }
  }

  /** StartRun: the execution's first task marks the run running. */
  async start(runId: string): Promise<void> {
    await markRunning(this.db, runId, this.db.now());
  }

  /** run-finalize: terminal state, then the hand-off. */
  async finish(runId: string, status: "ok" | "error" | "aborted" = "ok", db: Db = this.db): Promise<void> {
    await markEnded(this.db, runId, { status, endedAt: this.db.now() });
    await handOffLane(this.with(db), runId);
  }

  run(runId: string): Promise<RunRecord | undefined> {
    return getRun(this.db, runId);
  }

  async lane(sessionKey: string) {
    return getLane(this.db, sessionKey);
  }

  /** Starts and finishes whatever each execution-created run is, until nothing new starts. */
  async drainAll(): Promise<string[]> {
    const done: string[] = [];
    for (let i = 0; i < this.executions.created.length; i += 1) {
      const runId = this.executions.created[i];
      const run = await this.run(runId);
      if (!run || run.status === "ok") continue;
      await this.start(runId);
      await this.finish(runId);
      done.push(runId);
    }
    return done;
  }
}
