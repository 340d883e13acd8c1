import { lambdaEntry } from "../../shared/runtime/app-deps";
import { createDispatcherHandler } from "./app";

/** Lambda entry: SQS FIFO event source (dispatcher). */
export const handler = lambdaEntry(createDispatcherHandler);
