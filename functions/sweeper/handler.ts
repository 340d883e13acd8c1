import { lambdaEntry } from "../../shared/runtime/app-deps";
import { createSweeperHandler } from "./app";

/** Lambda entry: EventBridge schedule (every minute) and run-execution status changes (sweeper). */
export const handler = lambdaEntry(createSweeperHandler);
