import { lambdaEntry } from "../../shared/runtime/app-deps";
import { createRestHandler } from "./app";

/** Lambda entry: REST API proxy integration. */
export const handler = lambdaEntry(createRestHandler);
