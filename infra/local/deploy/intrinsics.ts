/**
 * CloudFormation intrinsics resolved the way CloudFormation would at deploy
 * time, against the local physical names and attributes: Ref, Fn::GetAtt,
 * Fn::Join, Fn::Sub, Fn::Select, Fn::Split, Fn::If (conditions false unless
 * known). Pseudo parameters resolve to the local account and region.
 */
export interface ResourceFacts {
  ref: string;
  attributes: Record<string, string>;
}

export interface ResolveScope {
  region: string;
  accountId: string;
  stackName: string;
  resources: Map<string, ResourceFacts>;
}

export class UnresolvableError extends Error {
  override readonly name = "UnresolvableError";
}

export function resolveValue(value: unknown, scope: ResolveScope): unknown {
  if (Array.isArray(value)) return value.map((item) => resolveValue(item, scope));
  if (!value || typeof value !== "object") return value;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  if (keys.length === 1 && (keys[0] === "Ref" || keys[0].startsWith("Fn::"))) return resolveIntrinsic(keys[0], record[keys[0]], scope);
  return Object.fromEntries(keys.map((key) => [key, resolveValue(record[key], scope)]));
}

function pseudo(name: string, scope: ResolveScope): string | undefined {
  const values: Record<string, string> = {
    "AWS::Region": scope.region,
    "AWS::AccountId": scope.accountId,
    "AWS::Partition": "aws",
    "AWS::URLSuffix": "amazonaws.com",
    "AWS::StackName": scope.stackName,
    "AWS::StackId": `arn:aws:cloudformation:${scope.region}:${scope.accountId}:stack/${scope.stackName}/local`,
    "AWS::NoValue": "",
  };
  return values[name];
}

function ref(name: string, scope: ResolveScope): string {
  const value = pseudo(name, scope) ?? scope.resources.get(name)?.ref;
  if (value === undefined) throw new UnresolvableError(`Ref ${name}: no such resource or parameter`);
  return value;
}

function getAtt(logicalId: string, attribute: string, scope: ResolveScope): string {
  const facts = scope.resources.get(logicalId);
  const value = facts?.attributes[attribute];
  if (value === undefined) throw new UnresolvableError(`Fn::GetAtt ${logicalId}.${attribute}: not known locally`);
  return value;
}

function str(value: unknown, what: string): string {
  if (typeof value !== "string") throw new UnresolvableError(`${what} did not resolve to a string: ${JSON.stringify(value)}`);
  return value;
}

function resolveIntrinsic(name: string, args: unknown, scope: ResolveScope): unknown {
  switch (name) {
    case "Ref":
      return ref(str(args, "Ref"), scope);
    case "Fn::GetAtt": {
      const [logicalId, ...rest] = typeof args === "string" ? args.split(".") : (args as string[]);
      return getAtt(String(logicalId), rest.join("."), scope);
    }
    case "Fn::Join": {
      const [separator, parts] = args as [string, unknown];
      const list = resolveValue(parts, scope);
      if (!Array.isArray(list)) throw new UnresolvableError("Fn::Join needs a list");
      return list.map((part) => str(part, "Fn::Join part")).join(separator);
    }
    case "Fn::Sub":
      return sub(args, scope);
    case "Fn::Select": {
      const [index, list] = args as [unknown, unknown];
      const items = resolveValue(list, scope);
      if (!Array.isArray(items)) throw new UnresolvableError("Fn::Select needs a list");
      return items[Number(resolveValue(index, scope))];
    }
    case "Fn::Split": {
      const [separator, source] = args as [string, unknown];
      return str(resolveValue(source, scope), "Fn::Split source").split(separator);
    }
    case "Fn::If": {
      const [, , whenFalse] = args as [string, unknown, unknown];
      return resolveValue(whenFalse, scope);
    }
    default:
      throw new UnresolvableError(`unsupported intrinsic ${name}`);
  }
}

function sub(args: unknown, scope: ResolveScope): string {
  const [template, variables] = typeof args === "string" ? [args, {}] : (args as [string, Record<string, unknown>]);
  const resolvedVariables = Object.fromEntries(Object.entries(variables).map(([k, v]) => [k, str(resolveValue(v, scope), `Fn::Sub variable ${k}`)]));
  return template.replace(/\$\{([^}!]+)\}/g, (_match, expression: string) => {
    if (expression in resolvedVariables) return resolvedVariables[expression];
    const [logicalId, ...attribute] = expression.split(".");
    return attribute.length > 0 ? getAtt(logicalId, attribute.join("."), scope) : ref(logicalId, scope);
  });
}
