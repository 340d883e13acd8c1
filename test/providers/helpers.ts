/** Small helpers shared by the provider tests (not a test file itself). */
import { expect } from "vitest";
import type { Message } from "../../shared/core/messages";
import type { ModelRequest, ProviderEvent, ToolSpec } from "../../shared/providers/types";

export const READ_FILE_TOOL: ToolSpec = {
  name: "read_file",
  description: "Read a file from the workspace.",
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
};

export function modelRequest(overrides: Partial<ModelRequest> = {}): ModelRequest {
  const messages: Message[] = [{ role: "user", content: "Hi" }];
  return { model: "test-model", system: "You are terse.", messages, tools: [], ...overrides };
}

/** Drains a provider stream; a throw here is itself a contract violation. */
export async function collect(stream: AsyncIterable<ProviderEvent>): Promise<ProviderEvent[]> {
  const events: ProviderEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

type Terminal = Extract<ProviderEvent, { type: "end" | "error" }>;

/** Asserts the contract (exactly one end|error, and it is last) and returns it. */
export function terminalOf(events: ProviderEvent[]): Terminal {
  const terminals = events.filter((e): e is Terminal => e.type === "end" || e.type === "error");
  expect(terminals).toHaveLength(1);
  expect(events[events.length - 1]).toBe(terminals[0]);
  return terminals[0];
}

export function endOf(events: ProviderEvent[]): Extract<ProviderEvent, { type: "end" }> {
  const terminal = terminalOf(events);
  if (terminal.type !== "end") throw new Error(`expected end, got error: ${JSON.stringify(terminal.failure)}`);
  return terminal;
}

export function errorOf(events: ProviderEvent[]): Extract<ProviderEvent, { type: "error" }> {
  const terminal = terminalOf(events);
  if (terminal.type !== "error") throw new Error(`expected error, got end: ${terminal.stopReason}`);
  return terminal;
}

export function textDeltas(events: ProviderEvent[]): string[] {
  return events.flatMap((e) => (e.type === "text-delta" ? [e.text] : []));
}

export function thinkingDeltas(events: ProviderEvent[]): string[] {
  return events.flatMap((e) => (e.type === "thinking-delta" ? [e.text] : []));
}

export function toolCalls(events: ProviderEvent[]): Array<Extract<ProviderEvent, { type: "tool-call" }>> {
  return events.filter((e): e is Extract<ProviderEvent, { type: "tool-call" }> => e.type === "tool-call");
}
