/**
 * Phase one of a local deploy: the physical name, Ref value and attributes
 * of every resource, computed the way CloudFormation names things (an
 * explicit name property wins, else `<stack>-<logicalId>`), with local
 * endpoints where AWS has regional ones. Deterministic, so a restart with the
 * same data folder finds the same tables, queues and secrets.
 */
import type { CfnResource, CfnTemplate } from "../../synth";
import type { ResourceFacts } from "./intrinsics";

export interface FactsContext {
  region: string;
  accountId: string;
  stackName: string;
  /** http://host:port of the local SQS (queue URLs live there). */
  sqsEndpoint: string;
}

const MAX_NAME = 64;

export function physicalName(stackName: string, logicalId: string, max = MAX_NAME): string {
  return `${stackName}-${logicalId}`.slice(0, max);
}

export function resourceFacts(template: CfnTemplate, ctx: FactsContext): Map<string, ResourceFacts> {
  const facts = new Map<string, ResourceFacts>();
  for (const [logicalId, resource] of Object.entries(template.Resources ?? {})) facts.set(logicalId, factsOf(logicalId, resource, ctx));
  return facts;
}

function literal(resource: CfnResource, key: string): string | undefined {
  const value = resource.Properties?.[key];
  return typeof value === "string" ? value : undefined;
}

function factsOf(logicalId: string, resource: CfnResource, ctx: FactsContext): ResourceFacts {
  const { region, accountId, stackName } = ctx;
  const arn = (service: string, rest: string) => `arn:aws:${service}:${region}:${accountId}:${rest}`;
  switch (resource.Type) {
    case "AWS::DynamoDB::Table": {
      const name = literal(resource, "TableName") ?? physicalName(stackName, logicalId, 255);
      return { ref: name, attributes: { Arn: arn("dynamodb", `table/${name}`), StreamArn: arn("dynamodb", `table/${name}/stream/local`) } };
    }
    case "AWS::SQS::Queue": {
      const fifo = resource.Properties?.FifoQueue === true || resource.Properties?.FifoQueue === "true";
      const name = literal(resource, "QueueName") ?? `${physicalName(stackName, logicalId, fifo ? 75 : 80)}${fifo ? ".fifo" : ""}`;
      const url = `${ctx.sqsEndpoint}/${accountId}/${name}`;
      return { ref: url, attributes: { Arn: arn("sqs", name), QueueName: name, QueueUrl: url } };
    }
    case "AWS::IAM::Role": {
      const name = literal(resource, "RoleName") ?? physicalName(stackName, logicalId);
      return { ref: name, attributes: { Arn: `arn:aws:iam::${accountId}:role/${name}`, RoleId: `AROA${logicalId.slice(0, 16).toUpperCase()}` } };
    }
    case "AWS::Lambda::Function": {
      const name = literal(resource, "FunctionName") ?? physicalName(stackName, logicalId);
      return { ref: name, attributes: { Arn: arn("lambda", `function:${name}`) } };
    }
    case "AWS::StepFunctions::StateMachine": {
      const name = literal(resource, "StateMachineName") ?? physicalName(stackName, logicalId, 80);
      const machineArn = arn("states", `stateMachine:${name}`);
      return { ref: machineArn, attributes: { Arn: machineArn, Name: name } };
    }
    case "AWS::Logs::LogGroup": {
      const name = literal(resource, "LogGroupName") ?? `/local/${physicalName(stackName, logicalId)}`;
      return { ref: name, attributes: { Arn: arn("logs", `log-group:${name}:*`) } };
    }
    case "AWS::ApiGatewayV2::Api":
    case "AWS::ApiGateway::RestApi": {
      const id = apiId(logicalId);
      return { ref: id, attributes: { ApiId: id, ApiEndpoint: `wss://${id}.execute-api.${region}.amazonaws.com`, RootResourceId: `${id}-root` } };
    }
    case "AWS::ApiGatewayV2::Stage":
    case "AWS::ApiGateway::Stage": {
      const name = literal(resource, "StageName") ?? logicalId;
      return { ref: name, attributes: {} };
    }
    case "AWS::Events::Rule": {
      const name = literal(resource, "Name") ?? physicalName(stackName, logicalId);
      return { ref: name, attributes: { Arn: arn("events", `rule/${name}`) } };
    }
    default:
      return { ref: `${logicalId}-local`, attributes: { Arn: arn("local", logicalId) } };
  }
}

/** A stable 10-character API id from the logical id (AWS's are random; stable ids keep URLs across restarts). */
function apiId(logicalId: string): string {
  let hash = 0;
  for (const char of logicalId) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
  return hash.toString(36).padStart(10, "0").slice(-10);
}
