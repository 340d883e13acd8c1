/**
 * What makes the local Step Functions durable across `kill -9`, the way AWS's
 * is: every running execution has one small file under the data folder
 * (`<dataDir>/stepfunctions/`) saying which execution it is and the last
 * Task state it entered or finished, with that state's input (or result).
 * Only ids and counters pass through our state machine, so the files stay
 * tiny. A file is replaced atomically (write + rename: a killed process
 * leaves either the old or the new one) and removed when its execution closes.
 *
 * On restart the stack resumes every journaled execution at its last point
 * (see resumePoint): a Task that was running is invoked again with the same
 * input — exactly what Step Functions' Retry does after a Lambda died — and
 * a Task that had finished goes on at its `Next` state with its result.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { join } from "node:path";
import * as z from "zod";

const PointSchema = z.object({
  state: z.string(),
  phase: z.enum(["entered", "succeeded"]),
  input: z.unknown(),
  output: z.unknown().optional(),
});
export type JournalPoint = z.infer<typeof PointSchema>;

/** One running execution, schema version 1. */
const EntrySchema = z.object({
  v: z.literal(1),
  executionArn: z.string(),
  stateMachineArn: z.string(),
  name: z.string(),
  input: z.string(),
  startDate: z.number(),
  at: PointSchema.optional(),
});
export type JournalEntry = z.infer<typeof EntrySchema>;

export interface ExecutionJournal {
  started(entry: Omit<JournalEntry, "v" | "at">): void;
  taskEntered(executionArn: string, state: string, input: unknown): void;
  taskSucceeded(executionArn: string, state: string, input: unknown, output: unknown): void;
  closed(executionArn: string): void;
  /** The executions that were running when the process stopped. */
  load(): JournalEntry[];
}

/** The journal when there is no data folder: executions live in memory only. */
export const NO_JOURNAL: ExecutionJournal = {
  started: () => undefined,
  taskEntered: () => undefined,
  taskSucceeded: () => undefined,
  closed: () => undefined,
  load: () => [],
};

export function createExecutionJournal(dir: string): ExecutionJournal {
  mkdirSync(dir, { recursive: true });
  const entries = new Map<string, JournalEntry>();
  const fileOf = (arn: string) => join(dir, `${createHash("sha256").update(arn).digest("hex").slice(0, 32)}.json`);
  const write = (entry: JournalEntry) => {
    const file = fileOf(entry.executionArn);
    writeFileSync(`${file}.tmp`, JSON.stringify(entry));
    renameSync(`${file}.tmp`, file);
  };
  const move = (arn: string, at: JournalPoint) => {
    const entry = entries.get(arn);
    if (!entry) return;
    entry.at = at;
    write(entry);
  };
  return {
    started: (started) => {
      const entry: JournalEntry = { v: 1, ...started };
      entries.set(entry.executionArn, entry);
      write(entry);
    },
    taskEntered: (arn, state, input) => move(arn, { state, phase: "entered", input }),
    taskSucceeded: (arn, state, input, output) => move(arn, { state, phase: "succeeded", input, output }),
    closed: (arn) => {
      entries.delete(arn);
      rmSync(fileOf(arn), { force: true });
    },
    load: () => {
      const loaded: JournalEntry[] = [];
      for (const name of readdirSync(dir).filter((file) => file.endsWith(".json"))) {
        const parsed = EntrySchema.safeParse(safeJson(readFileSync(join(dir, name), "utf8")));
        // A file we cannot read is left for inspection; its run is ended by the sweeper (no execution).
        if (!parsed.success) continue;
        entries.set(parsed.data.executionArn, parsed.data);
        loaded.push(parsed.data);
      }
      return loaded.sort((a, b) => a.startDate - b.startDate);
    },
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

export type ResumeAt =
  | { kind: "start" }
  | { kind: "state"; state: string; input: unknown }
  | { kind: "succeeded"; output: unknown }
  | { kind: "unresumable"; cause: string };

type StateDefinition = Record<string, unknown>;

/**
 * Where a journaled execution goes on: at its start when it never reached a
 * Task; at the Task it was in (a retry); after a finished Task, at its `Next`
 * with the result as input (our Tasks have no ResultPath/ResultSelector/
 * OutputPath, so the result is the next state's input; a Task with them is
 * retried instead). A state the definition no longer has cannot resume.
 */
export function resumePoint(at: JournalPoint | undefined, states: Record<string, StateDefinition>): ResumeAt {
  if (!at) return { kind: "start" };
  const state = states[at.state];
  if (!state) return { kind: "unresumable", cause: `The state '${at.state}' the execution was in is not in the deployed state machine.` };
  if (at.phase === "entered") return { kind: "state", state: at.state, input: at.input };
  const shaped = state.ResultPath !== undefined || state.ResultSelector !== undefined || state.OutputPath !== undefined;
  if (shaped) return { kind: "state", state: at.state, input: at.input };
  if (state.End === true) return { kind: "succeeded", output: at.output };
  if (typeof state.Next !== "string" || !states[state.Next]) return { kind: "unresumable", cause: `The state '${at.state}' has no next state to resume at.` };
  return { kind: "state", state: state.Next, input: at.output };
}
