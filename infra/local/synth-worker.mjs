// Worker threads do not inherit tsx's loader hooks: register them, then run the TypeScript worker.
import { register } from "tsx/esm/api";

register();
await import("./synth-worker.ts");
