/**
 * The CDK app, synthesized into a cloud assembly for the local stack. Kept
 * apart from infra/local/stack.ts so the long-lived `npm start` process loads
 * aws-cdk-lib only when it synthesizes in-process (tests); `npm start`
 * synthesizes in a child process, or not at all when the assembly cache has
 * the assembly (infra/local/assembly-cache.ts).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { App } from "aws-cdk-lib";
import type { AgentConfig } from "../../shared/config/config";
import { AgentRunnerStack, STACK_ID } from "../stack";
import { synthContext } from "./assembly-cache";

export interface SynthesizeOptions {
  config?: AgentConfig | Record<string, unknown>;
  configFile?: string;
  env?: Record<string, string | undefined>;
}

export interface Synthesized {
  dir: string;
  secretValues: Record<string, string>;
  config: AgentConfig;
}

/** Synthesizes in this thread into `outdir` (a fresh temporary folder when absent); bundles come from the cache. */
export function synthesizeAssembly(options: SynthesizeOptions, outdir?: string): Synthesized {
  const dir = outdir ?? mkdtempSync(join(tmpdir(), "agent-runner-assembly-"));
  const env = options.env ?? process.env;
  const app = new App({ outdir: dir, context: synthContext(options.configFile) });
  const stack = new AgentRunnerStack(app, STACK_ID, { processEnv: env, configObject: options.config as Record<string, unknown> | undefined });
  app.synth();
  return { dir, secretValues: stack.runner.agentConfig.secretValues, config: stack.runner.agentConfig.config };
}
