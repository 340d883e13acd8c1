import { lambdaEntry } from "../../shared/runtime/app-deps";
import { createRunStartHandler } from "./app";

/** Lambda entry: state machine task StartRun. */
export const handler = lambdaEntry(createRunStartHandler);
