/**
 * IAM identity-policy evaluation, pure: the same decision AWS makes for one
 * principal's identity-based statements (no resource policies, SCPs,
 * permission boundaries or session policies, none of which our stack uses).
 *
 * Order, as in AWS's evaluation logic: an explicit Deny on any requested
 * resource wins; otherwise every resource needs an Allow; otherwise the
 * request is implicitly denied.
 *
 * Matching:
 * - actions are case-insensitive (`DynamoDB:getitem` = `dynamodb:GetItem`);
 * - resources are case-sensitive;
 * - both take `*` (any run of characters, across `/` and `:`) and `?` (one
 *   character).
 *
 * Conditions: only the operators in SUPPORTED_CONDITION_OPERATORS are
 * evaluated. A statement using any other operator (including `...IfExists`
 * and `ForAnyValue:` / `ForAllValues:` forms) is resolved conservatively,
 * i.e. towards "denied": such an Allow never applies, such a Deny always
 * applies. Locally that may refuse a call AWS would accept, never the
 * reverse. Policy variables (`${aws:username}`) are not substituted.
 */

export interface IamStatement {
  Sid?: string;
  Effect: "Allow" | "Deny";
  Action?: string | string[];
  NotAction?: string | string[];
  Resource?: string | string[];
  NotResource?: string | string[];
  Condition?: Record<string, unknown>;
}

export interface IamRequest {
  /** `service:Operation`, e.g. `dynamodb:GetItem`. */
  action: string;
  /** ARNs (or `*`); every one must be allowed. */
  resources: string[];
  /** Condition keys such as `aws:SecureTransport`; values as strings. */
  context?: Record<string, string>;
}

export type IamDecision = "allow" | "implicit-deny" | "explicit-deny";

export interface IamEvaluation {
  decision: IamDecision;
  /** The first resource that was not allowed (explicitly denied, when the decision is explicit-deny). */
  deniedResource?: string;
  /** The Sid of the Deny statement that decided (explicit-deny), or of the Allow covering the first resource (allow). */
  matchedSid?: string;
}

export const SUPPORTED_CONDITION_OPERATORS = ["StringEquals", "StringLike", "ArnEquals", "ArnLike", "Bool"] as const;

type SupportedOperator = (typeof SUPPORTED_CONDITION_OPERATORS)[number];

/** Whether a statement's Condition block holds, or cannot be judged locally. */
type ConditionOutcome = "met" | "not-met" | "unsupported";

export function evaluatePolicy(statements: readonly IamStatement[], request: IamRequest): IamEvaluation {
  const context = request.context ?? {};
  for (const resource of request.resources) {
    const deny = statements.find((statement) => statement.Effect === "Deny" && denyApplies(statement, request.action, resource, context));
    if (deny) return { decision: "explicit-deny", deniedResource: resource, ...sidOf(deny) };
  }
  let firstAllow: IamStatement | undefined;
  for (const resource of request.resources) {
    const allow = statements.find((statement) => statement.Effect === "Allow" && allowApplies(statement, request.action, resource, context));
    if (!allow) return { decision: "implicit-deny", deniedResource: resource };
    firstAllow ??= allow;
  }
  if (!firstAllow) return { decision: "implicit-deny" };
  return { decision: "allow", ...sidOf(firstAllow) };
}

function sidOf(statement: IamStatement): { matchedSid?: string } {
  return statement.Sid === undefined ? {} : { matchedSid: statement.Sid };
}

function allowApplies(statement: IamStatement, action: string, resource: string, context: Record<string, string>): boolean {
  return coversRequest(statement, action, resource) && evaluateConditions(statement.Condition, context) === "met";
}

function denyApplies(statement: IamStatement, action: string, resource: string, context: Record<string, string>): boolean {
  return coversRequest(statement, action, resource) && evaluateConditions(statement.Condition, context) !== "not-met";
}

function coversRequest(statement: IamStatement, action: string, resource: string): boolean {
  return coversAction(statement, action) && coversResource(statement, resource);
}

function coversAction(statement: IamStatement, action: string): boolean {
  if (statement.Action !== undefined) return listOf(statement.Action).some((pattern) => matchesAction(pattern, action));
  if (statement.NotAction !== undefined) return !listOf(statement.NotAction).some((pattern) => matchesAction(pattern, action));
  return false;
}

function coversResource(statement: IamStatement, resource: string): boolean {
  if (statement.Resource !== undefined) return listOf(statement.Resource).some((pattern) => matchesWildcard(pattern, resource));
  if (statement.NotResource !== undefined) return !listOf(statement.NotResource).some((pattern) => matchesWildcard(pattern, resource));
  // An identity policy must name Resource or NotResource; one that names neither grants or denies nothing.
  return false;
}

function matchesAction(pattern: string, action: string): boolean {
  return matchesWildcard(pattern, action, { ignoreCase: true });
}

/** IAM's glob: `*` any run of characters (including `/` and `:`), `?` exactly one. */
function matchesWildcard(pattern: string, value: string, options: { ignoreCase?: boolean } = {}): boolean {
  return wildcardRegExp(pattern, options.ignoreCase === true).test(value);
}

/**
 * Compiled once per pattern: every AWS call of every function is evaluated
 * against its role's statements, and building the expression was about 2%
 * of the main thread's busy time under load. The patterns come from the
 * deployed policies, so the cache is as small as they are.
 */
const compiledWildcards = new Map<string, RegExp>();

function wildcardRegExp(pattern: string, ignoreCase: boolean): RegExp {
  const key = `${ignoreCase ? "i" : "s"}${pattern}`;
  let compiled = compiledWildcards.get(key);
  if (!compiled) {
    const source = Array.from(pattern, (char) => (char === "*" ? ".*" : char === "?" ? "." : escapeRegExp(char))).join("");
    compiled = new RegExp(`^${source}$`, ignoreCase ? "is" : "s");
    compiledWildcards.set(key, compiled);
  }
  return compiled;
}

function escapeRegExp(char: string): string {
  return /[\\^$.*+?()[\]{}|/-]/.test(char) ? `\\${char}` : char;
}

function listOf(value: string | string[]): string[] {
  return Array.isArray(value) ? value : [value];
}

/**
 * AWS: operators are ANDed, keys within an operator are ANDed, the values of
 * one key are ORed. A key missing from the context fails its test.
 */
function evaluateConditions(condition: Record<string, unknown> | undefined, context: Record<string, string>): ConditionOutcome {
  if (condition === undefined) return "met";
  const operators = Object.entries(condition);
  if (operators.some(([operator]) => !isSupportedOperator(operator))) return "unsupported";
  const met = operators.every(([operator, tests]) => operatorHolds(operator as SupportedOperator, tests, context));
  return met ? "met" : "not-met";
}

function isSupportedOperator(operator: string): operator is SupportedOperator {
  return (SUPPORTED_CONDITION_OPERATORS as readonly string[]).includes(operator);
}

function operatorHolds(operator: SupportedOperator, tests: unknown, context: Record<string, string>): boolean {
  if (typeof tests !== "object" || tests === null) return false;
  return Object.entries(tests).every(([key, expected]) => {
    const actual = contextValue(context, key);
    if (actual === undefined) return false;
    return conditionValues(expected).some((value) => valueMatches(operator, value, actual));
  });
}

/** Condition key names are case-insensitive in IAM; values are not. */
function contextValue(context: Record<string, string>, key: string): string | undefined {
  const wanted = key.toLowerCase();
  const entry = Object.entries(context).find(([name]) => name.toLowerCase() === wanted);
  return entry?.[1];
}

/** Templates write `"true"`, `true` or `["a", "b"]`; IAM compares them all as strings. */
function conditionValues(expected: unknown): string[] {
  const values = Array.isArray(expected) ? expected : [expected];
  return values.map((value) => String(value));
}

function valueMatches(operator: SupportedOperator, expected: string, actual: string): boolean {
  switch (operator) {
    case "StringEquals":
      return expected === actual;
    case "StringLike":
      return matchesWildcard(expected, actual);
    case "ArnEquals":
    case "ArnLike":
      return arnMatches(expected, actual);
    case "Bool":
      return expected.toLowerCase() === actual.toLowerCase();
  }
}

/**
 * AWS documents ArnEquals and ArnLike alike: each of the six colon-delimited
 * parts is compared on its own, with wildcards, so here `*` stops at a colon
 * in the first five parts (the resource part keeps any colons it has).
 */
function arnMatches(pattern: string, arn: string): boolean {
  const patternParts = arnParts(pattern);
  const arnPartsOf = arnParts(arn);
  if (!patternParts || !arnPartsOf) return false;
  return patternParts.every((part, index) => matchesWildcard(part, arnPartsOf[index]));
}

function arnParts(arn: string): string[] | undefined {
  const parts = arn.split(":");
  if (parts.length < 6) return undefined;
  return [...parts.slice(0, 5), parts.slice(5).join(":")];
}
