import { createRequire } from "node:module";
import { Template } from "aws-cdk-lib/assertions";
import { beforeAll, describe, expect, it } from "vitest";
import {
  ALL_ERRORS,
  FINALIZE_FAILED_ERROR,
  LAMBDA_RETRY,
  LAMBDA_TRANSIENT_ERRORS,
  PINNED_ERROR_NAMES,
  RUN_MACHINE_STATES,
  STATE_MACHINE_TIMEOUT_SECONDS,
  STATE_NAMES,
  TASK_FUNCTIONS,
} from "../../infra/state-machine";
import {
  placeholderFunctionArn,
  renderStateMachineDefinition,
  synthesizeTemplate,
  type CfnTemplate,
  type RenderedStateMachine,
} from "../../infra/synth";
import { logicalIdOfFunction, resourcesOfType, statementsOfRole } from "./helpers";
import { DecisionSchema } from "../../shared/core/run-loop";
import { TASK_TRIES } from "../../shared/core/history-budget";

const DECISION_ACTIONS = DecisionSchema.unwrap().options.map((option) => option.shape.action.value);

// asl-validator ships CommonJS without types; this is the shape its README documents.
type AslValidator = (definition: unknown) => { isValid: boolean; errorsText: (separator?: string) => string };
const aslValidator = createRequire(import.meta.url)("asl-validator") as AslValidator;

interface AslRule { ErrorEquals: string[]; ResultPath?: string; Next?: string; IntervalSeconds?: number; MaxAttempts?: number; BackoffRate?: number }
interface AslState {
  Type: string; Next?: string; Resource?: string; Parameters?: Record<string, unknown>; Default?: string;
  Choices?: Record<string, unknown>[]; Retry?: AslRule[]; Catch?: AslRule[]; SecondsPath?: string; Error?: string; End?: boolean;
}
interface Asl { StartAt: string; States: Record<string, AslState>; TimeoutSeconds?: number; QueryLanguage?: string }

const RENDER = { region: "eu-west-1", accountId: "123456789012" };
let json: CfnTemplate;
/** The loop machine (most of the loop's states); the run machine is `runAsl`. */
let rendered: RenderedStateMachine;
let asl: Asl;
let runRendered: RenderedStateMachine;
let runAsl: Asl;
const state = (name: string): AslState => asl.States[name];
const runState = (name: string): AslState => runAsl.States[name];

beforeAll(() => {
  json = synthesizeTemplate({ bundling: false });
  rendered = renderStateMachineDefinition(json, { ...RENDER, machine: "loop" });
  asl = rendered.definition as unknown as Asl;
  runRendered = renderStateMachineDefinition(json, RENDER);
  runAsl = runRendered.definition as unknown as Asl;
});

describe("definition", () => {
  it("is JSONPath only: no JSONata anywhere", () => {
    const machines = resourcesOfType(json, "AWS::StepFunctions::StateMachine");
    expect(machines).toHaveLength(2);
    for (const [, machine] of machines) expect(JSON.stringify(machine.Properties)).not.toMatch(/JSONata/i);
    for (const definition of [asl, runAsl]) {
      expect(definition.QueryLanguage ?? "JSONPath").toBe("JSONPath");
      for (const s of Object.values(definition.States)) expect((s as { QueryLanguage?: string }).QueryLanguage).toBeUndefined();
    }
  });

  it("passes asl-validator, both machines", () => {
    // The validator writes defaults (QueryLanguage) into what it is given.
    for (const definition of [rendered.definition, runRendered.definition]) {
      const result = aslValidator(structuredClone(definition));
      expect(result.errorsText()).toBe("");
      expect(result.isValid).toBe(true);
    }
  });

  it("the run machine is Attempt (End), RecoverAttempt (End), FinalizeRun (End) and FinalizeFailed: a clean run is one transition", () => {
    expect(runAsl.StartAt).toBe(STATE_NAMES.attempt);
    expect(Object.keys(runAsl.States).sort()).toEqual([...RUN_MACHINE_STATES].sort());
    expect(runState("Attempt")).toMatchObject({ Type: "Task", End: true, Parameters: { "runId.$": "$.runId", "entry.$": "$$.Execution.Name" } });
    expect(runState("Attempt").Next).toBeUndefined();
    expect(runState("Attempt").Retry).toEqual([{ ErrorEquals: [...LAMBDA_TRANSIENT_ERRORS], IntervalSeconds: 2, MaxAttempts: 3, BackoffRate: 2 }]);
    expect(runState("Attempt").Catch).toEqual([{ ErrorEquals: [ALL_ERRORS], ResultPath: "$.crash", Next: "RecoverAttempt" }]);
    expect(runState("RecoverAttempt")).toMatchObject({
      Type: "Task",
      End: true,
      Parameters: { "runId.$": "$.runId", "entry.$": "$$.Execution.Name", "crash.$": "$.crash" },
      Catch: [{ ErrorEquals: [ALL_ERRORS], ResultPath: "$.crash", Next: "FinalizeRun" }],
    });
    expect(runState("FinalizeRun")).toMatchObject({
      End: true,
      Retry: [{ ErrorEquals: [ALL_ERRORS], IntervalSeconds: 1, MaxAttempts: 5, BackoffRate: 2 }],
      Catch: [{ ErrorEquals: [ALL_ERRORS], Next: "FinalizeFailed" }],
    });
    expect(runState("FinalizeRun").Parameters).toBeUndefined();
    expect(runState("FinalizeFailed")).toMatchObject({ Type: "Fail", Error: FINALIZE_FAILED_ERROR });
    expect(runAsl.TimeoutSeconds).toBe(49 * 3600);
  });

  it("the loop machine has exactly the pinned states, starting at Route (a hand-off or a continuation brings a decision)", () => {
    expect(asl.StartAt).toBe(STATE_NAMES.route);
    expect(Object.keys(asl.States).sort()).toEqual(Object.values(STATE_NAMES).sort());
    expect(STATE_NAMES).toEqual({
      attempt: "Attempt", recoverAttempt: "RecoverAttempt", route: "Route",
      waitBeforeRetry: "WaitBeforeRetry", finalizeRun: "FinalizeRun", done: "Done", finalizeFailed: "FinalizeFailed",
      continued: "Continued", pauseForInput: "PauseForInput",
    });
  });

  it("only transitions to states that exist", () => {
    const targets = Object.values(asl.States).flatMap((s) => [
      s.Next, s.Default, ...(s.Catch ?? []).map((c) => c.Next), ...(s.Choices ?? []).map((c) => c.Next as string),
    ]).filter((t): t is string => t !== undefined);
    for (const target of targets) expect(asl.States).toHaveProperty([target]);
  });

  it("runs Attempt on the state Route passes it and moves to Route", () => {
    expect(state("Attempt")).toMatchObject({ Type: "Task", Next: "Route" });
    expect(asl.States).not.toHaveProperty("StartRun");
    expect(runAsl.States).not.toHaveProperty("StartRun");
  });

  it("passes the whole state to every task and lets results replace it", () => {
    for (const name of ["Attempt", "RecoverAttempt", "FinalizeRun"]) {
      expect(state(name).Parameters).toBeUndefined();
      expect(state(name)).not.toHaveProperty("ResultPath");
      expect(state(name)).not.toHaveProperty("OutputPath");
    }
    expect(state("Attempt").Next).toBe("Route");
    expect(state("RecoverAttempt").Next).toBe("Route");
  });

  it("retries Lambda service errors 3x from 2 s with backoff 2 on every task but FinalizeRun", () => {
    for (const name of ["Attempt", "RecoverAttempt"]) {
      expect(state(name).Retry).toEqual([
        { ErrorEquals: [...LAMBDA_TRANSIENT_ERRORS], IntervalSeconds: 2, MaxAttempts: 3, BackoffRate: 2 },
      ]);
    }
  });

  it("catches crashes of Attempt into $.crash and recovers", () => {
    for (const name of ["Attempt"]) {
      expect(state(name).Catch).toEqual([{ ErrorEquals: [ALL_ERRORS], ResultPath: "$.crash", Next: "RecoverAttempt" }]);
    }
    // A crash of the decision itself still ends the run through FinalizeRun.
    expect(state("RecoverAttempt").Catch).toEqual([{ ErrorEquals: [ALL_ERRORS], ResultPath: "$.crash", Next: "FinalizeRun" }]);
  });

  it("routes a finished run to Done, then on $.decision.action: attempt/compact/truncate, wait, continue_as_new, finalize, otherwise finalize", () => {
    const route = state("Route");
    expect(route.Type).toBe("Choice");
    expect(route.Choices).toEqual([
      { Variable: "$.finished", IsPresent: true, Next: "Done" },
      { Variable: "$.decision.action", IsPresent: false, Next: "FinalizeRun" },
      {
        Or: [
          { Variable: "$.decision.action", StringEquals: "attempt" },
          { Variable: "$.decision.action", StringEquals: "compact" },
          { Variable: "$.decision.action", StringEquals: "truncate" },
        ],
        Next: "Attempt",
      },
      {
        And: [
          { Variable: "$.decision.action", StringEquals: "wait" },
          { Variable: "$.decision.waitSeconds", IsNumeric: true },
        ],
        Next: "WaitBeforeRetry",
      },
      { Variable: "$.decision.action", StringEquals: "continue_as_new", Next: "Continued" },
      { Variable: "$.decision.action", StringEquals: "pause", Next: "PauseForInput" },
      { Variable: "$.decision.action", StringEquals: "finalize", Next: "FinalizeRun" },
    ]);
    expect(route.Default).toBe("FinalizeRun");
    expect(state("WaitBeforeRetry")).toEqual({ Type: "Wait", SecondsPath: "$.decision.waitSeconds", Next: "Attempt" });
    expect(state("Continued")).toMatchObject({ Type: "Succeed" });
  });

  it("routes every decision action the core can return", () => {
    const routed = JSON.stringify(state("Route").Choices);
    for (const action of DECISION_ACTIONS) expect(routed).toContain(`"StringEquals":"${action}"`);
  });

  it("finalizes with 5 retries from 1 s, then Done or FinalizeFailed", () => {
    expect(state("FinalizeRun")).toMatchObject({
      Retry: [{ ErrorEquals: [ALL_ERRORS], IntervalSeconds: 1, MaxAttempts: 5, BackoffRate: 2 }],
      Catch: [{ ErrorEquals: [ALL_ERRORS], Next: "FinalizeFailed" }],
      Next: "Done",
    });
    expect(state("Done")).toEqual({ Type: "Succeed" });
    expect(state("FinalizeFailed")).toMatchObject({ Type: "Fail", Error: FINALIZE_FAILED_ERROR });
    expect(FINALIZE_FAILED_ERROR).toBe("FinalizeFailed");
  });

  it("times out after 49 h (48 h run budget + margin)", () => {
    expect(asl.TimeoutSeconds).toBe(49 * 3600);
    expect(STATE_MACHINE_TIMEOUT_SECONDS).toBe(49 * 3600);
  });
});

describe("pinned error names", () => {
  it("pins the exact list", () => {
    expect([...PINNED_ERROR_NAMES]).toEqual([
      "Lambda.ServiceException",
      "Lambda.AWSLambdaException",
      "Lambda.SdkClientException",
      "Lambda.TooManyRequestsException",
      "States.ALL",
      "States.Timeout",
    ]);
  });

  it("matches on no name outside the pinned list in any Retry or Catch", () => {
    const matched = [...Object.values(asl.States), ...Object.values(runAsl.States)].flatMap((s) => [...(s.Retry ?? []), ...(s.Catch ?? [])].flatMap((r) => r.ErrorEquals));
    expect(matched.length).toBeGreaterThan(0);
    for (const name of matched) expect(PINNED_ERROR_NAMES).toContain(name);
  });
});

describe("the history budget's model of the machine (shared/core/history-budget.ts)", () => {
  it("counts every try a task gets before its Catch, and the states an iteration passes through", () => {
    const attempt = asl.States[STATE_NAMES.attempt];
    const maxTries = Math.max(...(attempt.Retry ?? []).map((r) => (r.MaxAttempts ?? 3) + 1));
    expect(TASK_TRIES).toBe(maxTries);
    expect(LAMBDA_RETRY.maxAttempts + 1).toBe(TASK_TRIES);
    // Attempt -> Route -> (WaitBeforeRetry ->) Attempt: one task, one choice, one wait per iteration.
    expect(attempt.Next).toBe(STATE_NAMES.route);
    expect(asl.States[STATE_NAMES.route].Type).toBe("Choice");
    expect(asl.States[STATE_NAMES.waitBeforeRetry].Next).toBe(STATE_NAMES.attempt);
  });
});

describe("deployment wiring", () => {
  it("both are Standard machines logging errors only to their own log group", () => {
    const template = Template.fromJSON(json);
    const groups = stateLogGroups();
    expect(groups).toHaveLength(2);
    for (const group of groups) {
      template.hasResourceProperties("AWS::StepFunctions::StateMachine", {
        StateMachineType: "STANDARD",
        LoggingConfiguration: { Level: "ERROR", IncludeExecutionData: false, Destinations: [{ CloudWatchLogsLogGroup: { LogGroupArn: { "Fn::GetAtt": [group, "Arn"] } } }] },
      });
    }
  });

  it("each may invoke exactly the three task functions", () => {
    for (const [, machine] of resourcesOfType(json, "AWS::StepFunctions::StateMachine")) {
      const roleId = (machine.Properties?.RoleArn as { "Fn::GetAtt": [string, string] })["Fn::GetAtt"][0];
      const invoke = statementsOfRole(json, roleId).filter((s) => s.Action === "lambda:InvokeFunction");
      const targets = new Set(JSON.stringify(invoke.map((s) => s.Resource)).match(/"Fn::GetAtt":\["([^"]+)","Arn"\]/g));
      const expected = [...new Set(Object.values(TASK_FUNCTIONS))].map((key) => `"Fn::GetAtt":["${logicalIdOfFunction(json, key)}","Arn"]`);
      expect([...targets].sort()).toEqual(expected.sort());
    }
  });
});

describe("renderStateMachineDefinition", () => {
  it("leaves no intrinsic objects in the definition", () => {
    const text = JSON.stringify(rendered.definition);
    expect(text).not.toMatch(/"(Ref|Fn::[A-Za-z]+)":/);
    expect(text).not.toContain("${Token");
  });

  it("maps exactly the three task ARNs to their function keys", () => {
    const expected = Object.fromEntries(
      Object.values(TASK_FUNCTIONS).map((key) => [placeholderFunctionArn(key, RENDER), key]),
    );
    expect(rendered.taskFunctions).toEqual(expected);
    expect(runRendered.taskFunctions).toEqual(expected);
    expect(placeholderFunctionArn("attempt", RENDER)).toBe("arn:aws:lambda:eu-west-1:123456789012:function:agent-runner-attempt");
    for (const [name, key] of Object.entries(TASK_FUNCTIONS)) {
      // An integration task (PauseForInput's waitForTaskToken) names its function in Parameters.
      const fn = (state(name).Parameters as { FunctionName?: string } | undefined)?.FunctionName ?? state(name).Resource!;
      expect(rendered.taskFunctions[fn]).toBe(key);
    }
  });

  it("refuses intrinsics it cannot resolve instead of passing them through (the local deployer's resolver)", () => {
    // The stack's template with its run machine's definition replaced.
    const [[machineId, machine]] = resourcesOfType(json, "AWS::StepFunctions::StateMachine").filter(([id]) => id.includes("RunStateMachine"));
    const render = (definitionString: unknown) =>
      renderStateMachineDefinition(
        { Resources: { ...json.Resources, [machineId]: { ...machine, Properties: { DefinitionString: definitionString } } } },
        RENDER,
      );
    const attemptId = logicalIdOfFunction(json, "attempt");
    const valid = { "Fn::Join": ["", ['{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"', { "Fn::GetAtt": [attemptId, "Arn"] }, '","End":true}}}']] };
    expect(render(valid).taskFunctions).toEqual({ [placeholderFunctionArn("attempt", RENDER)]: "attempt" });
    expect(() => render({ "Fn::ImportValue": "x" })).toThrow(expect.objectContaining({ name: "UnresolvableError", message: expect.stringMatching(/unsupported intrinsic/) }));
    expect(() => render({ "Fn::Join": ["", [{ Ref: "NotAFunction" }]] })).toThrow(/Ref NotAFunction/);
    expect(() => render({ "Fn::Join": ["", [{ "Fn::GetAtt": [attemptId, "Role"] }]] })).toThrow(/not known locally/);
  });
});

function stateLogGroups(): string[] {
  return resourcesOfType(json, "AWS::Logs::LogGroup")
    .filter(([, g]) => String(g.Properties?.LogGroupName ?? "").startsWith("/aws/vendedlogs/states/"))
    .map(([id]) => id);
}

describe("PauseForInput", () => {
  it("waits on a task token with only pointers, times out by the decision, and goes on to Attempt either way", () => {
    const pause = state("PauseForInput");
    expect(pause.Type).toBe("Task");
    expect(pause.Resource).toBe("arn:aws:states:::lambda:invoke.waitForTaskToken");
    expect((pause.Parameters as { Payload: unknown }).Payload).toEqual({
      action: "pause_for_input",
      "runId.$": "$.runId",
      "inputId.$": "$.decision.inputId",
      "taskToken.$": "$$.Task.Token",
    });
    expect(pause).toMatchObject({ TimeoutSecondsPath: "$.decision.timeoutSeconds", ResultPath: "$.resumed", Next: "Attempt" });
    expect(pause.Catch).toEqual([
      { ErrorEquals: ["States.Timeout"], ResultPath: "$.resumed", Next: "Attempt" },
      { ErrorEquals: ["States.ALL"], ResultPath: "$.crash", Next: "RecoverAttempt" },
    ]);
  });
});
