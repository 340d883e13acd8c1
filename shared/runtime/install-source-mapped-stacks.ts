/**
 * Injected first into every bundled function (infra/bundle.ts `inject`), so
 * the formatter is in place before any other module of the bundle runs.
 */
import { installSourceMappedStacks } from "./source-mapped-stacks";

installSourceMappedStacks();
