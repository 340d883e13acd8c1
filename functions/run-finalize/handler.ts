import { lambdaEntry } from "../../shared/runtime/app-deps";
import { createRunFinalizeHandler } from "./app";

/** Lambda entry: state machine task FinalizeRun. */
export const handler = lambdaEntry(createRunFinalizeHandler);
