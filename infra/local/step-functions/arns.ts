/**
 * ARNs and names, with the rules Step Functions applies to them.
 */
import { SfnApiError } from "./errors";

export interface ArnScope {
  region: string;
  accountId: string;
}

const MAX_NAME_LENGTH = 80;
// AWS: a name must not contain white space, brackets < > { } [ ], wildcards
// ? *, special characters " # % \ ^ | ~ ` $ & , ; : /, or control characters
// (U+0000-001F, U+007F-009F). AWS advises [A-Za-z0-9_-] only when CloudWatch
// logging is on; that is advice, not a rule the API enforces, so neither do we.
const FORBIDDEN_NAME_CHARS = /[\s<>{}\[\]?*"#%\\^|~`$&,;:/\u0000-\u001f\u007f-\u009f]/u;

export function isValidName(name: string): boolean {
  return name.length >= 1 && name.length <= MAX_NAME_LENGTH && !FORBIDDEN_NAME_CHARS.test(name);
}

export function assertValidExecutionName(name: string): void {
  if (!isValidName(name)) throw new SfnApiError("InvalidName", `Invalid Name: '${name}'`);
}

export function stateMachineArn(scope: ArnScope, name: string): string {
  return `arn:aws:states:${scope.region}:${scope.accountId}:stateMachine:${name}`;
}

export function executionArn(scope: ArnScope, machineName: string, executionName: string): string {
  return `arn:aws:states:${scope.region}:${scope.accountId}:execution:${machineName}:${executionName}`;
}

const STATE_MACHINE_ARN = /^arn:aws[a-z-]*:states:[a-z0-9-]+:\d{12}:stateMachine:[^:]+$/;
const EXECUTION_ARN = /^arn:aws[a-z-]*:states:[a-z0-9-]+:\d{12}:execution:[^:]+:[^:]+$/;

export function assertStateMachineArn(arn: unknown): asserts arn is string {
  if (typeof arn !== "string" || !STATE_MACHINE_ARN.test(arn)) {
    throw new SfnApiError("InvalidArn", `Invalid Arn: '${String(arn)}'`);
  }
}

export function assertExecutionArn(arn: unknown): asserts arn is string {
  if (typeof arn !== "string" || !EXECUTION_ARN.test(arn)) {
    throw new SfnApiError("InvalidArn", `Invalid Arn: '${String(arn)}'`);
  }
}

/**
 * The function name inside any of the forms Lambda accepts as FunctionName:
 * `name`, `name:qualifier`, `123456789012:function:name`, or a full ARN with
 * or without a qualifier.
 */
export function lambdaFunctionName(nameOrArn: string): string {
  const parts = nameOrArn.split(":");
  if (parts[0] === "arn") return parts[6] ?? "";
  if (parts[1] === "function") return parts[2] ?? "";
  return parts[0] ?? "";
}
