import { assistantText, type AssistantMessage, type Message, type UserMessage } from "../core/messages";
import type { HookRegistry } from "../hooks/registry";
import { runFirstAnswer } from "../hooks/runners";
import type { RunRef } from "../hooks/types";

/** OpenClaw's cap on before_agent_finalize revisions (run.ts MAX_BEFORE_AGENT_FINALIZE_REVISIONS). */
export const MAX_BEFORE_AGENT_FINALIZE_REVISIONS = 3;

/** OpenClaw's BEFORE_AGENT_FINALIZE_RETRY_PROMPT_PREFIX (reference §3.1); the hook's reason follows after a blank line. */
export const FINALIZE_REVISION_PREFIX =
  "Before accepting the previous final answer, apply this revision request and produce the revised final answer. Do not repeat completed work or rerun tools unless the request explicitly requires it.";

/** What a handler gets besides the run: OpenClaw gives each one 15 s (reference §J). */
export const BEFORE_AGENT_FINALIZE_TIMEOUT_MS = 15_000;

/**
 * before_agent_finalize, right before the attempt accepts a final answer: the
 * first handler (by priority) that answers `revise: true` sends the answer
 * back as the revision prompt. Returns that prompt (to commit and send to the
 * model), or undefined to accept the answer. Past the cap, the answer stands.
 */
export async function finalizeRevision(
  hooks: HookRegistry,
  ref: RunRef,
  answer: AssistantMessage,
  messages: readonly Message[],
  revisions: number,
): Promise<UserMessage | undefined> {
  if (revisions >= MAX_BEFORE_AGENT_FINALIZE_REVISIONS || !hooks.has("before_agent_finalize")) return undefined;
  const prompt = lastUserPrompt(messages);
  const verdict = await withinBudget(
    runFirstAnswer(hooks, "before_agent_finalize", { ...ref, prompt, finalText: assistantText(answer), revisions }, (r) => r.revise === true),
  );
  if (!verdict) return undefined;
  const reason = verdict.reason?.trim();
  return { role: "user", content: reason ? `${FINALIZE_REVISION_PREFIX}\n\n${reason}` : FINALIZE_REVISION_PREFIX };
}

/** A handler past its budget does not hold the answer back: the answer is accepted. */
async function withinBudget<T>(work: Promise<T>): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), BEFORE_AGENT_FINALIZE_TIMEOUT_MS);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The user's prompt of this turn: the last user message that is not a revision request. */
function lastUserPrompt(messages: readonly Message[]): string {
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    const message = messages[i];
    if (message.role === "user" && !message.content.startsWith(FINALIZE_REVISION_PREFIX)) return message.content;
  }
  return "";
}
