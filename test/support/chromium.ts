import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";

/**
 * Debian's `chromium` package (no browser download at install: playwright-core
 * only drives it). `.ci/run` installs it when missing; CHROMIUM_PATH points
 * anywhere else.
 */
const CANDIDATES = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/lib/chromium/chromium"];

export function findChromium(): string | undefined {
  const given = process.env.CHROMIUM_PATH;
  if (given) return existsSync(given) ? given : undefined;
  return CANDIDATES.find((path) => existsSync(path));
}

/** With REQUIRE_BROWSER=1 (`.ci/run` once chromium is installed) a missing browser is a failure, else a skip with this reason. */
export const NO_CHROMIUM_MESSAGE = "no chromium binary found (apt-get install chromium, or set CHROMIUM_PATH): the browser test is skipped";

export function requireChromiumInCi(): { path: string | undefined; run: boolean } {
  const path = findChromium();
  if (path) return { path, run: true };
  if (process.env.REQUIRE_BROWSER === "1") return { path, run: true }; // runs, and fails in beforeAll
  console.warn(NO_CHROMIUM_MESSAGE);
  return { path, run: false };
}

export async function launchChromium(path: string | undefined): Promise<Browser> {
  if (!path) throw new Error(`REQUIRE_BROWSER=1 and ${NO_CHROMIUM_MESSAGE.replace(": the browser test is skipped", "")}`);
  // --no-sandbox: CI and this machine run tests as root, where Chromium's sandbox refuses to start.
  return chromium.launch({ executablePath: path, headless: true, args: ["--no-sandbox", "--disable-dev-shm-usage"] });
}
