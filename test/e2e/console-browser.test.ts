/**
 * The web console in a real headless browser against the template-deployed
 * local stack: load /console, paste the key, send a message, watch the reply
 * stream (the fake model holds its stream half-way until the page shows the
 * partial text), then open the run and read its loop path: a 429, the wait
 * the loop decided, the attempt that succeeded. Screenshots land in
 * docs/screenshots/ (CONSOLE_SCREENSHOTS overrides the folder).
 */
import { mkdirSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalStack, type LocalStack } from "../../infra/local/stack";
import { loadAgentConfig } from "../../shared/config/config";
import { launchChromium, requireChromiumInCi } from "../support/chromium";
import { chat, chatStreamBody, CHAT_PATH, FakeOpenAIServer, openAIErrorBody } from "../support/fake-openai-server";

const chromium = requireChromiumInCi();

function rawStatus(origin: string, path: string): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const req = request(`${origin}${path}`, { path }, (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.on("error", reject);
    req.end();
  });
}
const SCREENSHOTS = process.env.CONSOLE_SCREENSHOTS ?? join(__dirname, "../../docs/screenshots");
const REPLY = "The loop retried after the rate limit and this answer streams in word by word.";
const WAIT_TIMEOUT = 90_000;

let oai: FakeOpenAIServer;
let stack: LocalStack;
let browser: Browser;
let page: Page;

// Hooks inside the suite: without a browser (and without REQUIRE_BROWSER=1) nothing starts.
describe.runIf(chromium.run)("web console in Chromium", () => {
  beforeAll(async () => {
    browser = await launchChromium(chromium.path);
    oai = await FakeOpenAIServer.start();
    const config = loadAgentConfig({ OPENAI_API_KEY: "test", OPENAI_BASE_URL: oai.baseURL, MODEL: "openai/gpt-4o" });
    // The 429's wait lasts 50 ms here instead of its seconds (the decision is still `wait`).
    stack = await startLocalStack({ config, waitStateMs: { WaitBeforeRetry: 50 } });
    page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    mkdirSync(SCREENSHOTS, { recursive: true });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
    await oai?.close();
  });

  it("serves the page and its module from the front door", async () => {
    const response = await page.goto(`${stack.restUrl}/console`);
    expect(response?.status()).toBe(200);
    await expect(page.title()).resolves.toBe("Agent runner console");
    // A raw path (fetch would normalise the dots away): nothing outside console/ is served.
    await expect(rawStatus(`${stack.restUrl}`, "/console/../package.json")).resolves.toBe(404);
    await expect(rawStatus(`${stack.restUrl}`, "/console/%2e%2e/package.json")).resolves.toBe(404);
  });

  it("connects with a pasted key, streams a reply and shows the loop path of a run that retried", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    oai.enqueue(
      chat.error(429, openAIErrorBody("Rate limit reached for gpt-4o on requests per min (RPM): Limit 3, Used 3.", "requests", "rate_limit_exceeded")),
      // Role chunk + four words, then the stream waits until the page has shown them.
      { kind: "sse", path: CHAT_PATH, body: chatStreamBody({ text: REPLY }), hold: { afterFrames: 5, until: held } },
    );

    await page.fill("#api-key", stack.authToken);
    await page.click("#connect-form button[type=submit]");
    await page.waitForSelector('body[data-connected="true"]', { timeout: WAIT_TIMEOUT });

    await page.fill("#session-key", "console-e2e");
    await page.fill("#message", "Hello console");
    await page.click("#composer button[type=submit]");

    // Watch it stream: the first words are on the page while the model still holds the rest.
    await page.waitForFunction('(document.getElementById("live-text")?.textContent ?? "").startsWith("The loop retried")', undefined, { timeout: WAIT_TIMEOUT });
    const partial = await page.textContent("#live-text");
    expect(partial).not.toContain("word by word.");
    expect(await page.getAttribute("#live-run", "data-state")).toBe("running");
    await page.screenshot({ path: join(SCREENSHOTS, "console-streaming.png"), fullPage: true });
    release();

    await page.waitForSelector('#live-run[data-state="ok"]', { timeout: WAIT_TIMEOUT });
    await expect(page.textContent("#live-text")).resolves.toBe(REPLY);

    const row = page.locator('#runs tbody tr[data-status="ok"]');
    await row.first().waitFor({ timeout: WAIT_TIMEOUT });
    await row.first().locator("button").click();
    await page.waitForSelector('#run-view[data-status="ok"]', { timeout: WAIT_TIMEOUT });

    const steps = await page.$$eval("#loop-path > li", (items) =>
      items.map((li) => ({ outcome: li.dataset.outcome, failureKind: li.dataset.failureKind, action: li.dataset.action })),
    );
    expect(steps).toEqual([
      { outcome: "failed", failureKind: "rate_limit", action: undefined },
      { outcome: undefined, failureKind: undefined, action: "wait" },
      { outcome: "completed", failureKind: "", action: undefined },
      { outcome: undefined, failureKind: undefined, action: "finalize" },
    ]);
    await expect(page.textContent("#loop-path")).resolves.toMatch(/wait \d+ s, then retry/);
    await expect(page.textContent("#transcript")).resolves.toContain("Hello console");
    await expect(page.textContent("#transcript")).resolves.toContain(REPLY);
    await expect(page.textContent("#sessions")).resolves.toContain("console-e2e");
    await page.screenshot({ path: join(SCREENSHOTS, "console-loop-path.png"), fullPage: true });
    expect(oai.pending).toBe(0);
  }, 240_000);
});
