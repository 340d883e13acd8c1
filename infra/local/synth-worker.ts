/**
 * Synthesizes the CDK app in a worker thread for `npm start`: the emulators
 * start meanwhile, and aws-cdk-lib's few hundred MB go away with the worker
 * instead of staying in the long-lived process.
 */
import { parentPort, workerData } from "node:worker_threads";
import { synthesizeAssembly } from "./stack";

parentPort?.postMessage(synthesizeAssembly(workerData as Parameters<typeof synthesizeAssembly>[0]));
