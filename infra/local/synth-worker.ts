/**
 * Synthesizes the CDK app in a worker thread for `npm start`: the emulators
 * start meanwhile, and aws-cdk-lib's few hundred MB go away with the worker
 * instead of staying in the long-lived process.
 */
import { parentPort, workerData } from "node:worker_threads";
import { synthesizeAssembly } from "./synthesize";

const { outdir, ...options } = workerData as Parameters<typeof synthesizeAssembly>[0] & { outdir?: string };
parentPort?.postMessage(synthesizeAssembly(options, outdir));
