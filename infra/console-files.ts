import { fileURLToPath } from "node:url";

/**
 * The web console's files (plain HTML, CSS and one ES module; no build step).
 * The same folder is deployed by infra/console-site.ts and served at
 * `/console` by the local front door.
 */
export const CONSOLE_DIR = fileURLToPath(new URL("../console/", import.meta.url));
/** Where the page lives, on the distribution and on the local front door. */
export const CONSOLE_PATH = "console";
