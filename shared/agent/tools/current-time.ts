import { ToolInputError, type ToolDefinition } from "./types";

/** current_time: the model has no clock; this is it. `now` is injected so tests are deterministic. */
export function createCurrentTimeTool(now: () => number = Date.now): ToolDefinition {
  return {
    name: "current_time",
    description: "Get the current date and time (UTC, and optionally in an IANA time zone such as Europe/Madrid).",
    parameters: {
      type: "object",
      properties: { timezone: { type: "string", description: "IANA time zone name; default UTC" } },
      additionalProperties: false,
    },
    mutating: false,
    async execute(args) {
      const at = new Date(now());
      const timezone = typeof args.timezone === "string" && args.timezone.trim() !== "" ? args.timezone.trim() : "UTC";
      let local: string;
      try {
        local = localTime(at, timezone);
      } catch {
        throw new ToolInputError(`unknown time zone "${timezone}"`);
      }
      return { content: JSON.stringify({ utc: at.toISOString(), timezone, local, unixMs: at.getTime() }) };
    },
  };
}

/** `Thursday 2026-01-15 13:30:00 GMT+1`: unambiguous for a model, independent of the host's locale. */
function localTime(at: Date, timeZone: string): string {
  const clock = new Intl.DateTimeFormat("sv-SE", {
    timeZone,
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    hourCycle: "h23",
  }).format(at);
  const weekday = new Intl.DateTimeFormat("en-US", { timeZone, weekday: "long" }).format(at);
  const offset = new Intl.DateTimeFormat("en-US", { timeZone, timeZoneName: "shortOffset" }).formatToParts(at).find((p) => p.type === "timeZoneName")?.value ?? "";
  return `${weekday} ${clock} ${offset}`.trim();
}
