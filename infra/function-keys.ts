/**
 * Which deployed Lambda function is which of ours, read from a synthesized
 * template. Free of aws-cdk-lib on purpose: the local deployer needs it on
 * every start, also when the cloud assembly comes from the cache and the CDK
 * is never loaded (infra/local/assembly-cache.ts).
 */
import { FUNCTION_KEYS, FUNCTION_KEY_TAG } from "./functions";

interface TemplateResource {
  Type: string;
  Properties?: Record<string, unknown>;
  Metadata?: Record<string, unknown>;
}

/** `FnName` of a function key: `run-finalize` -> `RunFinalizeFn`. */
export function constructIdOf(key: string): string {
  const pascal = key.split("-").map((part) => part.charAt(0).toUpperCase() + part.slice(1));
  return `${pascal.join("")}Fn`;
}

/** `Fn::GetAtt [logicalId, Arn]` of every Lambda function -> its key, from our tag or the construct path. */
export function functionKeysByLogicalId(template: object): Record<string, string> {
  const keys: Record<string, string> = {};
  const resources = (template as { Resources?: unknown }).Resources;
  for (const [logicalId, resource] of Object.entries(isRecord(resources) ? (resources as Record<string, TemplateResource>) : {})) {
    if (resource.Type !== "AWS::Lambda::Function") continue;
    const key = keyFromTags(resource) ?? keyFromPath(resource);
    if (key) keys[logicalId] = key;
  }
  return keys;
}

function keyFromTags(resource: TemplateResource): string | undefined {
  const tags = resource.Properties?.Tags;
  if (!Array.isArray(tags)) return undefined;
  const tag = tags.find((t): t is { Key: string; Value: string } => isRecord(t) && t.Key === FUNCTION_KEY_TAG);
  return tag?.Value;
}

/** Fallback: `AgentRunner/RunFinalizeFn/Resource` -> `run-finalize`. */
function keyFromPath(resource: TemplateResource): string | undefined {
  const path = resource.Metadata?.["aws:cdk:path"];
  if (typeof path !== "string") return undefined;
  const constructId = path.split("/").at(-2);
  return FUNCTION_KEYS.find((key) => constructIdOf(key) === constructId);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
