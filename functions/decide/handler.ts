import { lambdaEntry } from "../../shared/runtime/app-deps";
import { createDecideHandler } from "./app";

/** Lambda entry: state machine task RecoverAttempt. */
export const handler = lambdaEntry(createDecideHandler);
