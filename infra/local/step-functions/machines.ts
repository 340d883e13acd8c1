/**
 * State machines registered with the local Step Functions: the ASL, checked
 * and prepared once, and its Task states bound to in-process handlers.
 */
import { StateMachine } from "aws-local-stepfunctions";
import { type ArnScope, isValidName, stateMachineArn } from "./arns";
import { prepareDefinition } from "./definition";
import { bindTaskHandlers, type TaskHandler, type TaskOverride } from "./tasks";
import type { TaskTokenRegistry } from "./task-tokens";

export interface LocalStateMachine {
  name: string;
  /** The ASL definition (JSON object), e.g. rendered from the CDK app. */
  definition: object;
  /** Task `Resource` (a Lambda function ARN) -> the function's handler. */
  taskHandlers: Record<string, TaskHandler>;
  /** Lambda function ARN -> the function's timeout; Lambda's 3 s default otherwise. */
  taskTimeoutsMs?: Record<string, number>;
  /** Wait state name -> how long it really waits here (ms); tests use it to skip real waits. */
  waitStateMs?: Record<string, number>;
}

export interface RegisteredMachine {
  arn: string;
  name: string;
  engine: StateMachine;
  overrides: Record<string, TaskOverride>;
  waitStateMs?: Record<string, number>;
  /** The prepared definition's states (a restart resumes an execution at one of them). */
  states: Record<string, Record<string, unknown>>;
  /** An engine that starts at `state` (cached): resuming a journaled execution there. */
  engineFrom(state: string): StateMachine;
}

export class MachineRegistry {
  private readonly machines = new Map<string, RegisteredMachine>();

  constructor(
    private readonly scope: ArnScope,
    private readonly track: <T>(work: Promise<T>) => Promise<T>,
    private readonly tokens?: TaskTokenRegistry,
  ) {}

  /**
   * Registers (or replaces, like UpdateStateMachine) a machine. Throws at once
   * on an invalid name, an invalid ASL, or a Task no handler serves, rather
   * than failing the first execution.
   */
  register(machine: LocalStateMachine): string {
    if (!isValidName(machine.name)) throw new Error(`Invalid state machine name: '${machine.name}'`);
    const definition = prepareDefinition(machine.definition);
    // The constructor validates the ASL (asl-validator: ARNs and JSONPaths too).
    const engine = new StateMachine(definition);
    const overrides = bindTaskHandlers(definition, {
      stateMachineArn: stateMachineArn(this.scope, machine.name),
      taskHandlers: machine.taskHandlers,
      taskTimeoutsMs: machine.taskTimeoutsMs,
      region: this.scope.region,
      accountId: this.scope.accountId,
      track: this.track,
      tokens: this.tokens,
    });
    const arn = stateMachineArn(this.scope, machine.name);
    const states = (definition as unknown as { States: Record<string, Record<string, unknown>> }).States;
    const fromState = new Map<string, StateMachine>();
    const engineFrom = (state: string): StateMachine => {
      if (state === (definition as { StartAt?: string }).StartAt) return engine;
      // Validated above as a whole; from a later state the earlier ones are unreachable, which the validator refuses.
      const cached = fromState.get(state) ?? new StateMachine({ ...definition, StartAt: state }, { validationOptions: { noValidate: true } });
      fromState.set(state, cached);
      return cached;
    };
    this.machines.set(arn, { arn, name: machine.name, engine, overrides, waitStateMs: machine.waitStateMs, states, engineFrom });
    return arn;
  }

  get(arn: string): RegisteredMachine | undefined {
    return this.machines.get(arn);
  }
}
