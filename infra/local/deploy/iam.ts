/**
 * Each function's identity locally: its execution role (from the template)
 * and the inline policy statements attached to that role, resolved to local
 * ARNs. The edge evaluates every SDK call against these (implicit deny).
 */
import type { CfnTemplate } from "../../synth";
import type { IamStatement } from "../iam/policy";
import { resolveValue, type ResolveScope } from "./intrinsics";

export interface RoleIdentity {
  roleName: string;
  statements: IamStatement[];
}

/** Role logical id -> its resolved statements (AWS::IAM::Policy resources and the role's own Policies). */
export function roleStatements(template: CfnTemplate, scope: ResolveScope): Map<string, IamStatement[]> {
  const byRole = new Map<string, IamStatement[]>();
  const add = (roleLogicalId: string, statements: IamStatement[]) => byRole.set(roleLogicalId, [...(byRole.get(roleLogicalId) ?? []), ...statements]);
  for (const [logicalId, resource] of Object.entries(template.Resources ?? {})) {
    if (resource.Type === "AWS::IAM::Role") {
      add(logicalId, []);
      for (const policy of (resource.Properties?.Policies as { PolicyDocument: unknown }[] | undefined) ?? []) add(logicalId, statementsOf(policy.PolicyDocument, scope));
    }
    if (resource.Type !== "AWS::IAM::Policy") continue;
    const statements = statementsOf(resource.Properties?.PolicyDocument, scope);
    for (const role of (resource.Properties?.Roles as unknown[] | undefined) ?? []) {
      const roleRef = (role as { Ref?: string }).Ref;
      if (roleRef) add(roleRef, statements);
    }
  }
  return byRole;
}

function statementsOf(document: unknown, scope: ResolveScope): IamStatement[] {
  const resolved = resolveValue(document, scope) as { Statement?: IamStatement | IamStatement[] } | undefined;
  const statements = resolved?.Statement;
  if (!statements) return [];
  return Array.isArray(statements) ? statements : [statements];
}
