/**
 * AWS's error answers in each service's own wire shape (JSON 1.0 / 1.1 with
 * `__type`, SQS's query-compatible code header, Lambda's and API Gateway's
 * REST errors, S3's XML), so the real SDK raises locally what it raises in AWS.
 */
import type { IamEvaluation } from "../iam/policy";
import type { ActionCheck, EdgeRequest } from "../iam/request-actions";

/** The first check a caller's policy refused, and why. */
export interface Refusal {
  check: ActionCheck;
  evaluation: IamEvaluation;
}

export interface WireError {
  statusCode: number;
  headers: Record<string, string>;
  body: Buffer;
}

type JsonCodeFamily = "json-1.0" | "json-1.1";

const JSON_SERVICES: Record<string, JsonCodeFamily> = { dynamodb: "json-1.0", states: "json-1.0", secretsmanager: "json-1.1", sqs: "json-1.0" };

export function accessDeniedError(service: string, request: EdgeRequest, principalArn: string, refusal: Refusal): WireError {
  const { action } = refusal.check;
  const resource = refusal.evaluation.deniedResource ?? "*";
  const reason =
    refusal.evaluation.decision === "explicit-deny"
      ? "with an explicit deny in an identity-based policy"
      : `because no identity-based policy allows the ${action} action`;
  const message = `User: ${principalArn} is not authorized to perform: ${action} on resource: ${resource} ${reason}`;
  switch (service) {
    case "lambda":
      return jsonError(403, "AccessDeniedException", { Type: "User", Message: message });
    case "execute-api":
      // The Management API answers an IAM refusal as a bare Forbidden.
      return jsonError(403, "ForbiddenException", { message: "Forbidden" });
    case "s3":
      return xmlError(403, "<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>");
    case "sqs":
      return sqsError(request, "AccessDeniedException", "AccessDenied", message);
    default:
      return coralError(service, 400, "AccessDeniedException", message);
  }
}

const INVALID_TOKEN = "The security token included in the request is invalid.";

export function unrecognizedClientError(service: string, request: EdgeRequest): WireError {
  switch (service) {
    case "lambda":
      return jsonError(403, "UnrecognizedClientException", { Type: "User", message: INVALID_TOKEN });
    case "execute-api":
      return jsonError(403, "UnrecognizedClientException", { message: INVALID_TOKEN });
    case "s3":
      return xmlError(403, "<Error><Code>InvalidAccessKeyId</Code><Message>The AWS Access Key Id you provided does not exist in our records.</Message></Error>");
    case "sqs":
      return sqsError(request, "UnrecognizedClientException", "InvalidClientTokenId", INVALID_TOKEN, 403);
    default:
      return coralError(service, 403, "UnrecognizedClientException", INVALID_TOKEN);
  }
}

export function noEmulatorError(service: string, request: EdgeRequest): WireError {
  const message = `The local AWS edge has no emulator for service '${service}' (${request.method} ${request.path}).`;
  return coralError(service, 501, "NotImplemented", message);
}

export function unreachableError(request: EdgeRequest, error: Error): WireError {
  return coralError("", 502, "ServiceUnavailable", `The local emulator did not answer ${request.method} ${request.path}: ${error.message}`);
}

export function tooLargeError(service: string, request: EdgeRequest, limitBytes: number): WireError {
  return coralError(service, 413, "RequestEntityTooLarge", `${request.method} ${request.path}: body exceeds ${limitBytes} bytes`);
}

export function forbiddenApiError(): WireError {
  return jsonError(403, "ForbiddenException", { message: "Forbidden" });
}

/** `x-amzn-query-error` carries the query-protocol code; the SQS client (awsQueryCompatible) names its error from it. */
function sqsError(request: EdgeRequest, code: string, queryCode: string, message: string, statusCode = 400): WireError {
  if (request.headers["x-amz-target"]) {
    const error = coralError("sqs", statusCode, code, message);
    return { ...error, headers: { ...error.headers, "x-amzn-query-error": `${queryCode};Sender` } };
  }
  const xml = `<ErrorResponse><Error><Type>Sender</Type><Code>${queryCode}</Code><Message>${escapeXml(message)}</Message></Error><RequestId>00000000-0000-0000-0000-000000000000</RequestId></ErrorResponse>`;
  return xmlError(statusCode, xml);
}

export function coralError(service: string, statusCode: number, code: string, message: string): WireError {
  const contentType = JSON_SERVICES[service] === "json-1.1" ? "application/x-amz-json-1.1" : "application/x-amz-json-1.0";
  const body = { __type: `com.amazon.coral.service#${code}`, message };
  return { statusCode, headers: { "content-type": contentType, "x-amzn-ErrorType": code }, body: Buffer.from(JSON.stringify(body)) };
}

function jsonError(statusCode: number, code: string, body: Record<string, string>): WireError {
  return { statusCode, headers: { "content-type": "application/json", "x-amzn-ErrorType": code }, body: Buffer.from(JSON.stringify(body)) };
}

function xmlError(statusCode: number, xml: string): WireError {
  return { statusCode, headers: { "content-type": "application/xml" }, body: Buffer.from(`<?xml version="1.0" encoding="UTF-8"?>\n${xml}`) };
}

function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}
