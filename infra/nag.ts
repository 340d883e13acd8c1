/**
 * cdk-nag (AwsSolutions pack): the findings this design accepts, each with
 * its reason, acknowledged on the narrowest construct that carries them.
 * test/infra/nag.test.ts runs the pack and requires zero unacknowledged
 * findings; a new finding fails it until it is fixed or acknowledged here.
 */
import { Stack, Validations, type CfnElement } from "aws-cdk-lib";
import type { IConstruct } from "constructs";

export interface NagAcknowledgement {
  id: string;
  reason: string;
}

/** Findings about the whole runner (several resources, or resources CDK creates for us). */
export const RUNNER_ACKNOWLEDGEMENTS: readonly NagAcknowledgement[] = [
  { id: "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]", reason: "The AWS managed policy only lets each function write its own CloudWatch logs; every other grant is an inline policy scoped to one resource (infra/functions.ts)." },
  { id: "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]", reason: "The account-level role API Gateway needs to write REST execution logs; AWS's managed policy is the documented way." },
  { id: "AwsSolutions-L1", reason: "Functions run nodejs22.x, the Node LTS the bundles and the local sandboxes target; a runtime bump is its own tested change." },
  { id: "AwsSolutions-SMG4", reason: "The secret holds third-party model provider API keys that only their providers can rotate; operators replace them with put-secret-value and functions pick the new value up (cache age)." },
  { id: "AwsSolutions-APIG2", reason: "Every request body is validated with zod by the Lambda, which answers a precise 4xx; API Gateway models would duplicate the schemas." },
  { id: "AwsSolutions-APIG3", reason: "WAF is a deployment choice (cost, rules per organization); the stage is throttled and every key is rate limited (docs/security.md)." },
  { id: "AwsSolutions-COG4", reason: "Callers authenticate with API keys per tenant checked by the Lambda REQUEST authorizer (functions/authorizer), not Cognito user pools." },
  { id: "AwsSolutions-SF1", reason: "The state machine logs ERROR only, without execution data: ALL would copy run ids and crash causes into logs on every step (the run record and the event log keep them)." },
  { id: "AwsSolutions-SF2", reason: "X-Ray on the state machine follows the `tracing` prop (on by default, like the functions' tracing); a deployment that turns it off does so to keep its cost flat." },
  { id: "AwsSolutions-SQS3", reason: "AsyncFailures is itself the dead-letter destination of asynchronous invocations (infra/async-invocations.ts); the run queue has its own DLQ." },
  { id: "AwsSolutions-IAM5[Resource::*]", reason: "CloudWatch Logs delivery actions of the state machine's logging (logs:CreateLogDelivery, ...) and X-Ray put actions support no resource-level scoping." },
  { id: "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:AgentRunner-run-loop:*]", reason: "The sweeper describes and stops executions of the run machine; execution names are run ids, known only at run time." },
  { id: "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:AgentRunner-run-continued:*]", reason: "The sweeper describes and stops executions of the loop machine, where runs go on after their first attempt; execution names derive from run ids, known only at run time." },
];

/** Connection ids are generated per socket: ManageConnections can only be scoped to the stage and method. */
export function manageConnectionsAcknowledgements(wsApiLogicalId: string, stage: string): NagAcknowledgement[] {
  return ["POST", "GET", "DELETE"].map((method) => ({
    id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:<${wsApiLogicalId}>/${stage}/${method}/@connections/*]`,
    reason: "API Gateway Management API calls name a connection id generated per socket; the grant is scoped to this API, its stage and the one HTTP method the function needs.",
  }));
}

/** Step Functions invokes task functions by ARN with a version/alias suffix (`<arn>:*`), which CDK grants. */
export function taskInvokeAcknowledgement(functionLogicalId: string): NagAcknowledgement {
  return { id: `AwsSolutions-IAM5[Resource::<${functionLogicalId}.Arn>:*]`, reason: "CDK's LambdaInvoke grant covers the task function's versions and aliases (`<arn>:*`); each statement names one function of this runner." };
}

export const WS_ROUTE_ACKNOWLEDGEMENT: NagAcknowledgement = {
  id: "AwsSolutions-APIG4",
  reason: "WebSocket APIs authorize on $connect only (its Lambda authorizer); every later route of the connection runs as that connection, whose key or in-band `connect` ws-api checks before any method (docs/security.md).",
};

export const PUBLIC_REST_ACKNOWLEDGEMENT: NagAcknowledgement = {
  id: "AwsSolutions-APIG4",
  reason: "Public on purpose (infra/routes.ts PUBLIC_REST_RESOURCES): health answers nothing secret; channel webhooks and signed hooks verify the platform's signature in the function.",
};


export function acknowledge(scope: IConstruct, acknowledgements: readonly NagAcknowledgement[]): void {
  for (const acknowledgement of acknowledgements) Validations.of(scope).acknowledge(acknowledgement);
}

/** The logical id CloudFormation will see for a construct's default resource (what cdk-nag's finding ids name). */
export function logicalIdOf(construct: IConstruct): string {
  const stack = Stack.of(construct);
  return stack.resolve(stack.getLogicalId(construct.node.defaultChild as CfnElement)) as string;
}
