import type { Message } from "../../core/messages";

/**
 * Step 5 of the history chain: the context engine assembles what the model
 * sees from the repaired history (OpenClaw's contextEngine.assemble). The
 * default engine passes messages through; a memory or retrieval engine can
 * replace it and add to the system prompt. Its failure is never fatal: the
 * pipeline's messages are used instead (an empty answer counts as failure).
 */
export interface AssembleInput {
  messages: readonly Message[];
  tokenBudget: number;
  availableTools: readonly string[];
  prompt: string;
}

export interface AssembleOutput {
  messages: Message[];
  /** Prepended to the system prompt for this attempt. */
  systemPromptAddition?: string;
}

export interface ContextEngine {
  readonly id: string;
  assemble(input: AssembleInput): Promise<AssembleOutput | undefined>;
}

export const passthroughContextEngine: ContextEngine = {
  id: "passthrough",
  assemble: async (input) => ({ messages: [...input.messages] }),
};

export type AssembleReport = AssembleOutput & { engineFailed: boolean; failure?: string };

export async function assembleContext(engine: ContextEngine, input: AssembleInput): Promise<AssembleReport> {
  try {
    const out = await engine.assemble(input);
    if (!out || out.messages.length === 0) {
      return { messages: [...input.messages], engineFailed: true, failure: `context engine ${engine.id} returned nothing` };
    }
    return { ...out, engineFailed: false };
  } catch (error) {
    return { messages: [...input.messages], engineFailed: true, failure: `context engine ${engine.id} failed: ${String(error)}` };
  }
}
