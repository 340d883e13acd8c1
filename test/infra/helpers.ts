/** Shared lookups over a synthesized template for the infra tests. */
import { functionKeysByLogicalId, type CfnResource, type CfnTemplate } from "../../infra/synth";

export interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
}

export function resourcesOfType(template: CfnTemplate, type: string): [string, CfnResource][] {
  return Object.entries(template.Resources ?? {}).filter(([, r]) => r.Type === type);
}

export function logicalIdOfFunction(template: CfnTemplate, key: string): string {
  const entry = Object.entries(functionKeysByLogicalId(template)).find(([, k]) => k === key);
  if (!entry) throw new Error(`no function ${key}`);
  return entry[0];
}

export function actionsOf(statement: Statement): string[] {
  return Array.isArray(statement.Action) ? statement.Action : [statement.Action];
}

export function resourcesOf(statement: Statement): unknown[] {
  return Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource];
}

/** Inline policy statements attached to a role (by the role's logical id). */
export function statementsOfRole(template: CfnTemplate, roleLogicalId: string): Statement[] {
  return resourcesOfType(template, "AWS::IAM::Policy")
    .filter(([, p]) => JSON.stringify(p.Properties?.Roles) === JSON.stringify([{ Ref: roleLogicalId }]))
    .flatMap(([, p]) => (p.Properties?.PolicyDocument as { Statement: Statement[] }).Statement);
}

export function roleOfFunction(template: CfnTemplate, key: string): string {
  const fn = template.Resources?.[logicalIdOfFunction(template, key)];
  const role = fn?.Properties?.Role as { "Fn::GetAtt": [string, string] };
  return role["Fn::GetAtt"][0];
}

export function statementsOfFunction(template: CfnTemplate, key: string): Statement[] {
  return statementsOfRole(template, roleOfFunction(template, key));
}

/** Statements granting any action with the given service prefix, e.g. "dynamodb:". */
export function statementsFor(statements: Statement[], prefix: string): Statement[] {
  return statements.filter((s) => actionsOf(s).some((a) => a.startsWith(prefix)));
}

/** `{"Fn::Join": ["", ["arn:", {Ref: "AWS::Partition"}, ...]]}` -> `arn:${AWS::Partition}...`, for exact ARN asserts. */
export function flattenJoin(value: unknown): string {
  if (typeof value === "string") return value;
  const record = value as Record<string, unknown>;
  if (typeof record.Ref === "string") return `\${${record.Ref}}`;
  const getAtt = record["Fn::GetAtt"] as [string, string] | undefined;
  if (getAtt) return `\${${getAtt[0]}.${getAtt[1]}}`;
  const [separator, parts] = record["Fn::Join"] as [string, unknown[]];
  return parts.map(flattenJoin).join(separator);
}
