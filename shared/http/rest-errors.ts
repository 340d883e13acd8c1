import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from "aws-lambda";
import type middy from "@middy/core";
import { ApiError } from "../protocol/errors";
import { internalError, internalErrorLog } from "../protocol/internal-error";
import { errorResult } from "./rest";

interface ErrorLog {
  error(message: string, fields: Record<string, unknown>): void;
}

/**
 * The REST function's error mapping as a middy `onError` step: an ApiError
 * is its own status and body; anything else is logged with the request id
 * and answered as a 500 that quotes only that id (shared/protocol/internal-error.ts).
 */
export function restErrorResponses(log: ErrorLog): middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context> {
  return {
    onError: (request) => {
      const { error, event, context } = request;
      if (error instanceof ApiError) {
        request.response = errorResult(error);
        return;
      }
      const requestId = event.requestContext?.requestId ?? context.awsRequestId;
      log.error("unhandled REST error", { ...internalErrorLog(error, requestId), path: event.path });
      request.response = errorResult(internalError(requestId));
    },
  };
}
