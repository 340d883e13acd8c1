import { lambdaEntry } from "../../shared/runtime/app-deps";
import { createAttemptHandler } from "./app";

/** Lambda entry: state machine task Attempt. */
export const handler = lambdaEntry(createAttemptHandler);
