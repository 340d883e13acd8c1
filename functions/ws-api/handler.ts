import { lambdaEntry } from "../../shared/runtime/app-deps";
import { createWebSocketHandler } from "./app";

/** Lambda entry: every route of the WebSocket API. */
export const handler = lambdaEntry(createWebSocketHandler);
