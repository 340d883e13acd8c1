/**
 * In-process synthesis for the local stack: build the very same CDK app,
 * take the state machine's DefinitionString from the template and resolve it
 * into plain ASL with placeholder Lambda ARNs, so the local executor runs the
 * definition that `cdk deploy` would ship.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { App } from "aws-cdk-lib";
import { REPO_ROOT } from "./lambdas";
import { AgentRunnerStack, STACK_ID } from "./stack";
import { functionKeysByLogicalId } from "./function-keys";
import { resolveValue, type ResolveScope, type ResourceFacts } from "./local/deploy/intrinsics";

export type CfnTemplate = { Resources?: Record<string, CfnResource> } & Record<string, unknown>;
export interface CfnResource {
  Type: string;
  Properties?: Record<string, unknown>;
  Metadata?: Record<string, unknown>;
}

export interface SynthOptions {
  /**
   * Kept for callers of wave 1. Function code is always bundled now (by
   * infra/bundle.ts, cached by input), so this no longer changes anything.
   */
  bundling?: boolean;
  /** Extra CDK context, e.g. `{ model: "openai/gpt-4o-mini" }`. */
  context?: Record<string, unknown>;
}

/** Synthesizes AgentRunnerStack in-process and returns its CloudFormation template. */
export function synthesizeTemplate(opts: SynthOptions = {}): CfnTemplate {
  const outdir = mkdtempSync(join(tmpdir(), "agent-runner-synth-"));
  try {
    const context: Record<string, unknown> = {
      ...readCdkJsonContext(),
      "aws:cdk:enable-path-metadata": true,
      ...opts.context,
    };
    // An empty list means "bundle no stack": assets get a placeholder hash.
    if (!opts.bundling) context["aws:cdk:bundling-stacks"] = [];
    const app = new App({ outdir, context });
    const stack = new AgentRunnerStack(app, STACK_ID);
    return app.synth().getStackArtifact(stack.artifactId).template as CfnTemplate;
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

/** Same feature flags as `cdk synth`, so both paths produce the same template. */
function readCdkJsonContext(): Record<string, unknown> {
  const cdkJson = JSON.parse(readFileSync(join(REPO_ROOT, "cdk.json"), "utf8")) as { context?: Record<string, unknown> };
  return cdkJson.context ?? {};
}

export { functionKeysByLogicalId } from "./function-keys";

export interface RenderOptions {
  region: string;
  accountId: string;
  /** Which of the stack's state machines (infra/state-machine.ts): the run machine unless told. */
  machine?: "run" | "loop";
}

export interface RenderedStateMachine {
  /** Plain ASL, no CloudFormation intrinsics left. */
  definition: Record<string, unknown>;
  /** Task `Resource` ARN in `definition` -> function key (e.g. "attempt"). */
  taskFunctions: Record<string, string>;
}

/** Placeholder ARN the rendered ASL uses for a function key. */
export function placeholderFunctionArn(key: string, opts: RenderOptions): string {
  return `arn:aws:lambda:${opts.region}:${opts.accountId}:function:agent-runner-${key}`;
}

export function renderStateMachineDefinition(template: object, opts: RenderOptions): RenderedStateMachine {
  const machine = stateMachineResource(template, opts.machine ?? "run");
  const resolved = resolveValue(machine.Properties?.DefinitionString, scopeFor(template, opts));
  if (typeof resolved !== "string") throw new Error("DefinitionString did not resolve to a string");
  const definition = JSON.parse(resolved) as Record<string, unknown>;
  return { definition, taskFunctions: taskFunctionsOf(definition, template, opts) };
}

/** Sorted route keys of the WebSocket API. */
export function listWebSocketRoutes(template: object): string[] {
  return Object.values(resourcesOf(template))
    .filter((r) => r.Type === "AWS::ApiGatewayV2::Route")
    .map((r) => String(r.Properties?.RouteKey))
    .sort();
}

/** Templates arrive as plain objects (JSON files, other tools): read Resources defensively. */
function resourcesOf(template: object): Record<string, CfnResource> {
  const resources = (template as CfnTemplate).Resources;
  return isRecord(resources) ? (resources as Record<string, CfnResource>) : {};
}

/** The run machine's logical id has `RunStateMachine` in it, the loop machine's `LoopStateMachine`. */
function stateMachineResource(template: object, machine: "run" | "loop"): CfnResource {
  const type = "AWS::StepFunctions::StateMachine";
  const found = Object.entries(resourcesOf(template)).filter(([id, r]) => r.Type === type && id.includes(machine === "loop" ? "LoopStateMachine" : "RunStateMachine"));
  if (found.length !== 1) throw new Error(`expected exactly one ${machine} ${type}, found ${found.length}`);
  return found[0][1];
}

function taskFunctionsOf(definition: Record<string, unknown>, template: object, opts: RenderOptions): Record<string, string> {
  const arnToKey = new Map(
    Object.values(functionKeysByLogicalId(template)).map((key) => [placeholderFunctionArn(key, opts), key]),
  );
  const taskFunctions: Record<string, string> = {};
  for (const state of allStates(definition)) {
    if (state.Type !== "Task" || typeof state.Resource !== "string") continue;
    // An integration (`lambda:invoke.waitForTaskToken`) names its function in Parameters.
    const arn = INTEGRATION_RESOURCE.test(state.Resource) ? functionNameOf(state) : state.Resource;
    const key = arn === undefined ? undefined : arnToKey.get(arn);
    if (!key || arn === undefined) throw new Error(`task resource ${state.Resource} is not one of the stack's functions`);
    taskFunctions[arn] = key;
  }
  return taskFunctions;
}

const INTEGRATION_RESOURCE = /^arn:aws[a-z-]*:states:::lambda:invoke/;

function functionNameOf(state: Record<string, unknown>): string | undefined {
  const parameters = state.Parameters;
  return isRecord(parameters) && typeof parameters.FunctionName === "string" ? parameters.FunctionName : undefined;
}

/** States at any depth (Parallel branches, Map item processors). */
function allStates(machine: Record<string, unknown>): Record<string, unknown>[] {
  const states = isRecord(machine.States) ? Object.values(machine.States).filter(isRecord) : [];
  return states.flatMap((state) => [state, ...nestedMachines(state).flatMap(allStates)]);
}

function nestedMachines(state: Record<string, unknown>): Record<string, unknown>[] {
  const branches = Array.isArray(state.Branches) ? state.Branches.filter(isRecord) : [];
  const processors = [state.ItemProcessor, state.Iterator].filter(isRecord);
  return [...branches, ...processors];
}

/**
 * The definition's intrinsics resolve with the local deployer's resolver
 * (infra/local/deploy/intrinsics.ts), against a scope that knows only the
 * stack's functions, under their placeholder names: anything else in the
 * definition is an error, never passed through.
 */
function scopeFor(template: object, opts: RenderOptions): ResolveScope {
  const resources = new Map<string, ResourceFacts>(
    Object.entries(functionKeysByLogicalId(template)).map(([logicalId, key]) => [
      logicalId,
      { ref: `agent-runner-${key}`, attributes: { Arn: placeholderFunctionArn(key, opts) } },
    ]),
  );
  return { region: opts.region, accountId: opts.accountId, stackName: STACK_ID, resources };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
