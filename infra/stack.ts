/**
 * AgentRunnerStack: this repo's app, one AgentRunner configured from CDK
 * context (`cdk.json` or `-c key=value`, infra/config.ts), with the outputs
 * `cdk deploy` prints: the URLs, the secret to fill and a curl to try.
 */
import { CfnOutput, Stack, type StackProps } from "aws-cdk-lib";
import type { Construct } from "constructs";
import { AgentRunner } from "./agent-runner";
import { readConfig, type StackConfig } from "./config";

export { DLQ_MAX_RECEIVE_COUNT, TABLE_SCHEMA, VISIBILITY_TIMEOUT_FACTOR } from "./agent-runner";

/** Construct id (and default stack name) used by the app and by synth.ts. */
export const STACK_ID = "AgentRunner";

export class AgentRunnerStack extends Stack {
  readonly config: StackConfig;
  readonly runner: AgentRunner;

  constructor(scope: Construct, id: string, props?: StackProps & { processEnv?: Record<string, string | undefined>; configObject?: Record<string, unknown> }) {
    super(scope, id, props);
    this.config = readConfig(this.node);
    this.runner = new AgentRunner(this, "Runner", {
      config: props?.configObject ?? this.config.configFile,
      model: this.config.model,
      openaiBaseUrl: this.config.openaiBaseUrl,
      anthropicBaseUrl: this.config.anthropicBaseUrl,
      workspaceDir: this.config.workspaceDir,
      authTokenSha256: this.config.authTokenSha256,
      removalPolicy: this.config.removalPolicy,
      logLevel: this.config.logLevel,
      tracing: this.config.tracing,
      stateMachineLogLevel: this.config.stateMachineLogLevel,
      console: this.config.console,
      processEnv: props?.processEnv,
    });
    const runner = this.runner;
    const secretKeys = runner.agentConfig.deployed.secretKeys;
    this.output("RestApiUrl", runner.restApiUrl);
    this.output("WebSocketUrl", runner.webSocketUrl);
    if (runner.consoleUrl) this.output("ConsoleUrl", runner.consoleUrl, "Paste an API key into the page");
    this.output("AlarmTopicArn", runner.alarmTopic.topicArn, "Subscribe to get the alarms");
    this.output("TableName", runner.tableName);
    this.output("QueueUrl", runner.queueUrl);
    this.output("StateMachineArn", runner.stateMachineArn);
    this.output("ProviderKeysSecretArn", runner.providerKeys.secretArn, `Fill in: ${secretKeys.join(", ")}`);
    if (runner.channelSecrets) {
      this.output("ChannelSecretsArn", runner.channelSecrets.secretArn, `Fill in: ${(runner.agentConfig.deployed.channelSecretKeys ?? []).join(", ")}`);
    }
    this.output("ConfigVersion", runner.agentConfig.deployed.version, `Model ${runner.agentConfig.config.model}`);
    this.output(
      "FillSecretCommand",
      `aws secretsmanager put-secret-value --secret-id ${runner.providerKeys.secretArn} --secret-string '${JSON.stringify(Object.fromEntries(secretKeys.map((k) => [k, "..."])))}'`,
    );
    this.output(
      "TryItCommand",
      `curl -s -X POST ${runner.restApiUrl}v1/agent -H "authorization: Bearer $TOKEN" -H 'content-type: application/json' -d '{"sessionKey":"main","message":"hello"}'`,
    );
  }

  private output(id: string, value: string, description?: string): void {
    new CfnOutput(this, id, { value, description });
  }
}
