import { readFileSync } from "node:fs";
import { join } from "node:path";
import { App } from "aws-cdk-lib";
import { AwsSolutionsChecks } from "cdk-nag";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../infra/lambdas";
import { RUNNER_ACKNOWLEDGEMENTS } from "../../infra/nag";
import { AgentRunnerStack, STACK_ID } from "../../infra/stack";

/**
 * cdk-nag's AwsSolutions pack over the synthesized stack: no finding may be
 * left unacknowledged, and every acknowledgement (infra/nag.ts) says why.
 * Before this suite (wave 3's template): 59 findings over 22 rules.
 */
function nagReport() {
  const context = JSON.parse(readFileSync(join(REPO_ROOT, "cdk.json"), "utf8")).context ?? {};
  const app = new App({ context: { ...context, "aws:cdk:bundling-stacks": [] } });
  const stack = new AgentRunnerStack(app, STACK_ID);
  return new AwsSolutionsChecks().validateScope(stack);
}

describe("cdk-nag AwsSolutions", () => {
  it("has no unacknowledged finding", () => {
    const report = nagReport();
    const findings = report.violations.flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} ${r.resourceLogicalId}`));
    console.log(`cdk-nag AwsSolutions: ${findings.length} unacknowledged findings`);
    expect(findings).toEqual([]);
  }, 300_000);

  it("gives every acknowledgement a reason", () => {
    for (const acknowledgement of RUNNER_ACKNOWLEDGEMENTS) expect(acknowledgement.reason.length).toBeGreaterThan(40);
  });
});
