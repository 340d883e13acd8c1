import { Match, Template } from "aws-cdk-lib/assertions";
import { beforeAll, describe, expect, it } from "vitest";
import { FUNCTION_KEYS } from "../../infra/functions";
import { RUN_ERRORS_ALARM_THRESHOLD } from "../../infra/observability";
import { synthesizeTemplate, type CfnTemplate } from "../../infra/synth";
import { METRIC, METRICS_NAMESPACE } from "../../shared/observability/names";
import { logicalIdOfFunction, resourcesOfType } from "./helpers";

/** Logs, metrics, tracing, alarms and the dashboard, as the template states them. */
let defaults: CfnTemplate;
let tuned: CfnTemplate;

beforeAll(() => {
  defaults = synthesizeTemplate();
  tuned = synthesizeTemplate({ context: { tracing: "false", stateMachineLogLevel: "ALL", logLevel: "debug", console: "true" } });
});

const envOf = (template: CfnTemplate, key: string) =>
  (template.Resources![logicalIdOfFunction(template, key)].Properties!.Environment as { Variables: Record<string, unknown> }).Variables;

describe("logs", () => {
  it.each(FUNCTION_KEYS)("%s logs through Powertools at the configured level", (key) => {
    expect(envOf(defaults, key)).toMatchObject({ POWERTOOLS_SERVICE_NAME: "agent-runner", POWERTOOLS_LOG_LEVEL: "INFO" });
    expect(envOf(tuned, key)).toMatchObject({ POWERTOOLS_LOG_LEVEL: "DEBUG" });
  });

  it("logs the state machine at ERROR by default, at the level the prop asks for otherwise, never with execution data", () => {
    const level = (template: CfnTemplate) => Template.fromJSON(template).findResources("AWS::StepFunctions::StateMachine");
    const config = (template: CfnTemplate) => (Object.values(level(template))[0]!.Properties as { LoggingConfiguration: { Level: string; IncludeExecutionData: boolean } }).LoggingConfiguration;
    expect(config(defaults)).toMatchObject({ Level: "ERROR", IncludeExecutionData: false });
    expect(config(tuned)).toMatchObject({ Level: "ALL", IncludeExecutionData: false });
  });
});

describe("metrics", () => {
  it.each(FUNCTION_KEYS)("%s emits EMF into the runner's namespace", (key) => {
    expect(envOf(defaults, key)).toMatchObject({ POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE });
  });
});

describe("tracing", () => {
  it("has X-Ray on every function and the state machine by default, and the tracer enabled", () => {
    const template = Template.fromJSON(defaults);
    for (const key of FUNCTION_KEYS) {
      expect(defaults.Resources![logicalIdOfFunction(defaults, key)].Properties!.TracingConfig).toEqual({ Mode: "Active" });
      expect(envOf(defaults, key)).toMatchObject({ POWERTOOLS_TRACE_ENABLED: "true" });
    }
    template.hasResourceProperties("AWS::StepFunctions::StateMachine", { TracingConfiguration: { Enabled: true } });
  });

  it("turns X-Ray and the tracer off with the prop", () => {
    for (const key of FUNCTION_KEYS) {
      expect((tuned.Resources![logicalIdOfFunction(tuned, key)].Properties!.TracingConfig as { Mode?: string } | undefined)?.Mode ?? "PassThrough").toBe("PassThrough");
      expect(envOf(tuned, key)).toMatchObject({ POWERTOOLS_TRACE_ENABLED: "false" });
    }
  });
});

describe("alarms", () => {
  it("sends every alarm's ALARM and OK to the created topic", () => {
    const [topicId] = resourcesOfType(defaults, "AWS::SNS::Topic")[0]!;
    const alarms = resourcesOfType(defaults, "AWS::CloudWatch::Alarm");
    expect(alarms.length).toBe(6 + FUNCTION_KEYS.length);
    for (const [, alarm] of alarms) {
      expect(alarm.Properties!.AlarmActions).toEqual([{ Ref: topicId }]);
      expect(alarm.Properties!.OKActions).toEqual([{ Ref: topicId }]);
    }
    expect(defaults.Outputs).toHaveProperty("AlarmTopicArn");
  });

  it("alarms on failed runs from the runner's own metric", () => {
    Template.fromJSON(defaults).hasResourceProperties("AWS::CloudWatch::Alarm", {
      Namespace: METRICS_NAMESPACE,
      MetricName: METRIC.runsEnded,
      Dimensions: Match.arrayWith([{ Name: "outcome", Value: "error" }]),
      Threshold: RUN_ERRORS_ALARM_THRESHOLD,
    });
  });
});

describe("dashboard", () => {
  it("is one dashboard with every runner figure and the AWS ones", () => {
    const dashboards = resourcesOfType(defaults, "AWS::CloudWatch::Dashboard");
    expect(dashboards).toHaveLength(1);
    const body = JSON.stringify(dashboards[0]![1].Properties!.DashboardBody);
    for (const name of Object.values(METRIC)) expect(body).toContain(name);
    for (const aws of ["AWS/SQS", "AWS/States", "AWS/Lambda"]) expect(body).toContain(aws);
  });
});

describe("console site", () => {
  it("is off by default", () => {
    expect(resourcesOfType(defaults, "AWS::CloudFront::Distribution")).toHaveLength(0);
    expect(defaults.Outputs).not.toHaveProperty("ConsoleUrl");
  });

  it("serves the console from a private bucket and the REST API under /v1/* on one CloudFront distribution", () => {
    const template = Template.fromJSON(tuned);
    template.resourceCountIs("AWS::CloudFront::Distribution", 1);
    template.hasResourceProperties("AWS::S3::Bucket", {
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
    });
    template.hasResourceProperties("AWS::CloudFront::Distribution", {
      DistributionConfig: Match.objectLike({
        DefaultRootObject: "console/index.html",
        CacheBehaviors: [Match.objectLike({ PathPattern: "/v1/*", ViewerProtocolPolicy: "https-only" })],
      }),
    });
    template.hasResourceProperties("AWS::CloudFront::CachePolicy", {
      CachePolicyConfig: Match.objectLike({ ParametersInCacheKeyAndForwardedToOrigin: Match.objectLike({ HeadersConfig: { HeaderBehavior: "whitelist", Headers: ["Authorization"] } }) }),
    });
    expect(tuned.Outputs).toHaveProperty("ConsoleUrl");
  });
});
