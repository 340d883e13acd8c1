// A child process started with no loader flags (whatever flags started the parent): register tsx's hooks, then run the TypeScript entry.
import { register } from "tsx/esm/api";

register();
await import("./synth-process.ts");
