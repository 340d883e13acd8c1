/**
 * Example plugin: a prompt / context injector. Adds fixed text to the system
 * prompt (house rules, the deployment's persona) and a per-turn note in front
 * of the user's message (for instance the date in the user's timezone), on
 * every attempt, without changing the stored transcript.
 *
 *   plugins: [{ "path": "./examples/plugins/context-injector.ts",
 *               "config": { "systemContext": "Answer in British English.",
 *                           "turnContext": "The user is on the support plan.",
 *                           "dateInTimeZone": "Europe/Madrid" } }]
 *
 * `systemContext` goes after the system prompt (appendSystemContext) and
 * `turnContext` before the user's prompt for this attempt only
 * (prependContext); both through the before_prompt_build hook.
 */
import type { AgentRunnerPlugin } from "../../shared/plugins/types";

const text = (value: unknown): string | undefined => (typeof value === "string" && value.trim() !== "" ? value : undefined);

/** `Today is Tuesday, 1 December 2026` in the configured timezone. */
function today(timeZone: string): string {
  const formatted = new Intl.DateTimeFormat("en-GB", { timeZone, weekday: "long", day: "numeric", month: "long", year: "numeric" }).format(new Date());
  return `Today is ${formatted} (${timeZone}).`;
}

const plugin: AgentRunnerPlugin = {
  id: "context-injector",
  register(api) {
    const systemContext = text(api.config.systemContext);
    const turnContext = text(api.config.turnContext);
    const timeZone = text(api.config.dateInTimeZone);
    if (timeZone) today(timeZone); // an unknown timezone throws here, at load, not in a run
    api.on("before_prompt_build", () => {
      const turn = [turnContext, timeZone ? today(timeZone) : undefined].filter(Boolean).join("\n");
      return {
        ...(systemContext ? { appendSystemContext: systemContext } : {}),
        ...(turn ? { prependContext: turn } : {}),
      };
    });
  },
};

export default plugin;
