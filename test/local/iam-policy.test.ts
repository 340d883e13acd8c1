import { describe, expect, it } from "vitest";
import { evaluatePolicy, type IamStatement, SUPPORTED_CONDITION_OPERATORS } from "../../infra/local/iam/policy";

const TABLE = "arn:aws:dynamodb:us-east-1:000000000000:table/Sessions";
const OTHER_TABLE = "arn:aws:dynamodb:us-east-1:000000000000:table/Other";
const MACHINE = "arn:aws:states:us-east-1:000000000000:stateMachine:Runner";

function allow(action: string | string[], resource: string | string[], extra: Partial<IamStatement> = {}): IamStatement {
  return { Effect: "Allow", Action: action, Resource: resource, ...extra };
}

function deny(action: string | string[], resource: string | string[], extra: Partial<IamStatement> = {}): IamStatement {
  return { Effect: "Deny", Action: action, Resource: resource, ...extra };
}

describe("evaluatePolicy: actions", () => {
  it("denies implicitly when nothing grants the action", () => {
    const result = evaluatePolicy([], { action: "dynamodb:GetItem", resources: [TABLE] });

    expect(result).toEqual({ decision: "implicit-deny", deniedResource: TABLE });
  });

  it("allows an exact grant and reports its Sid", () => {
    const result = evaluatePolicy([allow("dynamodb:GetItem", TABLE, { Sid: "Read" })], { action: "dynamodb:GetItem", resources: [TABLE] });

    expect(result).toEqual({ decision: "allow", matchedSid: "Read" });
  });

  it("matches actions case-insensitively", () => {
    const result = evaluatePolicy([allow("DynamoDB:getitem", TABLE)], { action: "dynamodb:GetItem", resources: [TABLE] });

    expect(result.decision).toBe("allow");
  });

  it.each([
    ["dynamodb:*", "dynamodb:PutItem", "allow"],
    ["*", "sqs:SendMessage", "allow"],
    ["states:Describe*", "states:DescribeExecution", "allow"],
    ["states:Describe*", "states:StartExecution", "implicit-deny"],
    ["dynamodb:?etItem", "dynamodb:GetItem", "allow"],
    ["dynamodb:?etItem", "dynamodb:BatchGetItem", "implicit-deny"],
    ["dynamodb:Get", "dynamodb:GetItem", "implicit-deny"],
  ])("action pattern %s against %s: %s", (pattern, action, decision) => {
    expect(evaluatePolicy([allow(pattern, "*")], { action, resources: [TABLE] }).decision).toBe(decision);
  });

  it("NotAction allows everything except the listed actions", () => {
    const statements = [{ Effect: "Allow" as const, NotAction: "dynamodb:Delete*", Resource: "*" }];

    expect(evaluatePolicy(statements, { action: "dynamodb:PutItem", resources: [TABLE] }).decision).toBe("allow");
    expect(evaluatePolicy(statements, { action: "dynamodb:DeleteItem", resources: [TABLE] }).decision).toBe("implicit-deny");
  });

  it("a statement without Action or NotAction grants nothing", () => {
    const result = evaluatePolicy([{ Effect: "Allow", Resource: "*" }], { action: "dynamodb:GetItem", resources: [TABLE] });

    expect(result.decision).toBe("implicit-deny");
  });
});

describe("evaluatePolicy: resources", () => {
  it.each([
    ["arn:aws:dynamodb:us-east-1:000000000000:table/Sessions", TABLE, "allow"],
    ["arn:aws:dynamodb:us-east-1:000000000000:table/sessions", TABLE, "implicit-deny"],
    ["arn:aws:dynamodb:*:*:table/Sessions", TABLE, "allow"],
    ["arn:aws:dynamodb:us-east-1:000000000000:table/Sessions/index/*", `${TABLE}/index/byUser`, "allow"],
    ["arn:aws:dynamodb:us-east-1:000000000000:table/Sessions", `${TABLE}/index/byUser`, "implicit-deny"],
    ["arn:aws:dynamodb:us-east-1:000000000000:*", `${TABLE}/index/byUser`, "allow"],
    ["arn:aws:secretsmanager:us-east-1:000000000000:secret:api-key-??????", "arn:aws:secretsmanager:us-east-1:000000000000:secret:api-key-Ab12Cd", "allow"],
    ["arn:aws:secretsmanager:us-east-1:000000000000:secret:api-key-??????", "arn:aws:secretsmanager:us-east-1:000000000000:secret:api-key", "implicit-deny"],
    ["arn:aws:s3:::bucket/a.b+c(d)", "arn:aws:s3:::bucket/a.b+c(d)", "allow"],
    ["arn:aws:s3:::bucket/a.b", "arn:aws:s3:::bucket/aXb", "implicit-deny"],
  ])("resource pattern %s against %s: %s", (pattern, resource, decision) => {
    expect(evaluatePolicy([allow("*", pattern)], { action: "dynamodb:Query", resources: [resource] }).decision).toBe(decision);
  });

  it("every resource must be allowed; the first one that is not is reported", () => {
    const statements = [allow("dynamodb:BatchWriteItem", TABLE)];

    const result = evaluatePolicy(statements, { action: "dynamodb:BatchWriteItem", resources: [TABLE, OTHER_TABLE] });

    expect(result).toEqual({ decision: "implicit-deny", deniedResource: OTHER_TABLE });
  });

  it("resources may be allowed by different statements", () => {
    const statements = [allow("dynamodb:BatchWriteItem", TABLE, { Sid: "One" }), allow("dynamodb:BatchWriteItem", OTHER_TABLE, { Sid: "Two" })];

    const result = evaluatePolicy(statements, { action: "dynamodb:BatchWriteItem", resources: [TABLE, OTHER_TABLE] });

    expect(result).toEqual({ decision: "allow", matchedSid: "One" });
  });

  it("NotResource covers every resource except the listed ones", () => {
    const statements = [{ Effect: "Allow" as const, Action: "dynamodb:*", NotResource: OTHER_TABLE }];

    expect(evaluatePolicy(statements, { action: "dynamodb:GetItem", resources: [TABLE] }).decision).toBe("allow");
    expect(evaluatePolicy(statements, { action: "dynamodb:GetItem", resources: [OTHER_TABLE] }).decision).toBe("implicit-deny");
  });

  it("no resources requested is not an allow", () => {
    expect(evaluatePolicy([allow("*", "*")], { action: "dynamodb:GetItem", resources: [] }).decision).toBe("implicit-deny");
  });
});

describe("evaluatePolicy: explicit deny", () => {
  it("an explicit Deny wins over any Allow and reports its Sid", () => {
    const statements = [allow("*", "*"), deny("dynamodb:DeleteItem", TABLE, { Sid: "KeepSessions" })];

    const result = evaluatePolicy(statements, { action: "dynamodb:DeleteItem", resources: [TABLE] });

    expect(result).toEqual({ decision: "explicit-deny", deniedResource: TABLE, matchedSid: "KeepSessions" });
  });

  it("a Deny on one of several resources denies the request, even after an unallowed one", () => {
    const statements = [allow("dynamodb:BatchGetItem", TABLE), deny("dynamodb:*", OTHER_TABLE)];
    const third = "arn:aws:dynamodb:us-east-1:000000000000:table/Third";

    const result = evaluatePolicy(statements, { action: "dynamodb:BatchGetItem", resources: [third, OTHER_TABLE] });

    expect(result).toEqual({ decision: "explicit-deny", deniedResource: OTHER_TABLE });
  });

  it("a Deny with NotAction denies every other action", () => {
    const statements = [allow("*", "*"), { Effect: "Deny" as const, NotAction: ["states:StartExecution", "states:Describe*"], Resource: "*" }];

    expect(evaluatePolicy(statements, { action: "states:DescribeExecution", resources: [MACHINE] }).decision).toBe("allow");
    expect(evaluatePolicy(statements, { action: "states:DeleteStateMachine", resources: [MACHINE] }).decision).toBe("explicit-deny");
  });
});

describe("evaluatePolicy: conditions", () => {
  const request = (context: Record<string, string>) => ({ action: "states:StartExecution", resources: [MACHINE], context });

  it("lists the operators it evaluates", () => {
    expect(SUPPORTED_CONDITION_OPERATORS).toEqual(["StringEquals", "StringLike", "ArnEquals", "ArnLike", "Bool"]);
  });

  it("Bool compares as text, whether the template wrote true or \"true\"", () => {
    const statements = [allow("states:*", "*", { Condition: { Bool: { "aws:SecureTransport": true } } })];

    expect(evaluatePolicy(statements, request({ "aws:SecureTransport": "true" })).decision).toBe("allow");
    expect(evaluatePolicy(statements, request({ "aws:SecureTransport": "false" })).decision).toBe("implicit-deny");
  });

  it("a key missing from the context fails the condition", () => {
    const statements = [allow("states:*", "*", { Condition: { StringEquals: { "aws:RequestedRegion": "us-east-1" } } })];

    expect(evaluatePolicy(statements, request({})).decision).toBe("implicit-deny");
  });

  it("condition key names are case-insensitive, values case-sensitive", () => {
    const statements = [allow("states:*", "*", { Condition: { StringEquals: { "AWS:requestedregion": "us-east-1" } } })];

    expect(evaluatePolicy(statements, request({ "aws:RequestedRegion": "us-east-1" })).decision).toBe("allow");
    expect(evaluatePolicy(statements, request({ "aws:RequestedRegion": "US-EAST-1" })).decision).toBe("implicit-deny");
  });

  it("values of one key are ORed, keys and operators are ANDed", () => {
    const statements = [
      allow("states:*", "*", {
        Condition: {
          StringEquals: { "aws:RequestedRegion": ["eu-west-1", "us-east-1"] },
          StringLike: { "aws:PrincipalArn": "arn:aws:sts::*:assumed-role/Runner*" },
        },
      }),
    ];
    const principal = "arn:aws:sts::000000000000:assumed-role/RunnerRole/fn";

    expect(evaluatePolicy(statements, request({ "aws:RequestedRegion": "us-east-1", "aws:PrincipalArn": principal })).decision).toBe("allow");
    expect(evaluatePolicy(statements, request({ "aws:RequestedRegion": "us-east-1", "aws:PrincipalArn": "arn:aws:sts::0:assumed-role/Other/fn" })).decision).toBe("implicit-deny");
    expect(evaluatePolicy(statements, request({ "aws:RequestedRegion": "us-west-2", "aws:PrincipalArn": principal })).decision).toBe("implicit-deny");
  });

  it("ArnLike wildcards stay within one colon-delimited part; the resource part may hold colons", () => {
    const statements = [allow("states:*", "*", { Condition: { ArnLike: { "aws:SourceArn": "arn:aws:states:*:000000000000:stateMachine:*" } } })];

    expect(evaluatePolicy(statements, request({ "aws:SourceArn": MACHINE })).decision).toBe("allow");
    expect(evaluatePolicy(statements, request({ "aws:SourceArn": `${MACHINE}:v1` })).decision).toBe("allow");
    expect(evaluatePolicy(statements, request({ "aws:SourceArn": "arn:aws:states:us-east-1:extra:000000000000:stateMachine:X" })).decision).toBe(
      "implicit-deny",
    );
    expect(evaluatePolicy(statements, request({ "aws:SourceArn": "not-an-arn" })).decision).toBe("implicit-deny");
  });

  it("ArnEquals compares exactly when the pattern has no wildcard", () => {
    const statements = [allow("states:*", "*", { Condition: { ArnEquals: { "aws:SourceArn": MACHINE } } })];

    expect(evaluatePolicy(statements, request({ "aws:SourceArn": MACHINE })).decision).toBe("allow");
    expect(evaluatePolicy(statements, request({ "aws:SourceArn": `${MACHINE}2` })).decision).toBe("implicit-deny");
  });

  it("a conditional Deny applies only when its condition holds", () => {
    const statements = [allow("*", "*"), deny("*", "*", { Condition: { Bool: { "aws:SecureTransport": "false" } } })];

    expect(evaluatePolicy(statements, request({ "aws:SecureTransport": "true" })).decision).toBe("allow");
    expect(evaluatePolicy(statements, request({ "aws:SecureTransport": "false" })).decision).toBe("explicit-deny");
  });

  it("an unsupported operator resolves towards denial: such an Allow never applies, such a Deny always does", () => {
    const unsupported = { IpAddress: { "aws:SourceIp": "10.0.0.0/8" } };
    const context = { "aws:SourceIp": "10.1.2.3" };

    expect(evaluatePolicy([allow("*", "*", { Condition: unsupported })], request(context)).decision).toBe("implicit-deny");
    expect(evaluatePolicy([allow("*", "*"), deny("*", "*", { Condition: unsupported })], request(context)).decision).toBe("explicit-deny");
    expect(
      evaluatePolicy([allow("*", "*", { Condition: { StringEqualsIfExists: { "aws:RequestedRegion": "us-east-1" } } })], request({})).decision,
    ).toBe("implicit-deny");
  });
});
