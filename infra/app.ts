/**
 * CDK app entry (`cdk.json` runs it with tsx). Account and region come from
 * the CLI's profile; without credentials the stack synthesizes env-agnostic.
 */
import { App } from "aws-cdk-lib";
import { AgentRunnerStack, STACK_ID } from "./stack";

const app = new App();
new AgentRunnerStack(app, STACK_ID, {
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});
app.synth();
