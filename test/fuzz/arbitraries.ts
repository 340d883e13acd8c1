import fc from "fast-check";

/**
 * Generators for the entry-point fuzz suite. Each mixes pure noise with
 * inputs one mutation away from valid, because near-misses are what reach
 * past the first parse (the 5xx the review found were all such).
 */
/** encodeURIComponent without its URIError on lone surrogates (those are sent as raw malformed escapes instead). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
export const encode = (text: string) => encodeURIComponent(text.replace(LONE_SURROGATE, "\uFFFD"));

export const PROTOTYPE_NAMES = ["constructor", "__proto__", "toString", "valueOf", "hasOwnProperty", "isPrototypeOf", "propertyIsEnumerable", "toLocaleString", "__defineGetter__", "__lookupGetter__"];

/** Strings that break naive code: escapes, unicode, control characters, prototype names, long runs. */
export const nastyString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.constantFrom(...PROTOTYPE_NAMES, "", " ", "%", "%ZZ", "%E0%A4%A", "..", "../..", "\u0000", "\uD800", "null", "{}", "[]", "run_", "main", "a/b", "ü", "🙂"),
  fc.integer({ min: 1, max: 3000 }).map((n) => "x".repeat(n)),
);

const jsonLeaf = fc.oneof(nastyString, fc.integer(), fc.double({ noNaN: false }), fc.boolean(), fc.constant(null));

/** JSON values (as parsed) with nasty keys, including own `__proto__` keys. */
export const nastyJson: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: "small", maxDepth: 3 }, jsonLeaf, tie("array"), tie("object")),
  array: fc.array(tie("value"), { maxLength: 4 }),
  object: fc.dictionary(fc.oneof(nastyString, fc.constantFrom(...PROTOTYPE_NAMES)), tie("value"), { maxKeys: 5 }),
})).value;

/** A JSON text the way a client might send it: as serialised, or with a key rewritten to `__proto__`, or cut short. */
export const jsonText = (value: fc.Arbitrary<unknown>) =>
  fc.tuple(value, fc.constantFrom("as-is", "proto", "truncate")).map(([v, how]) => {
    const text = JSON.stringify(v) ?? "null";
    if (how === "proto") return text.replace(/"[^"]*":/, '"__proto__":');
    if (how === "truncate") return text.slice(0, Math.max(0, text.length - 1));
    return text;
  });

/** `POST /v1/agent` bodies: near-valid requests with one field replaced by noise, or noise. */
export const agentBody = fc.oneof(
  fc.record(
    {
      sessionKey: fc.oneof(fc.constantFrom("fuzz", "fuzz:a", "fuzz/b"), nastyString),
      message: fc.oneof(fc.constantFrom("hi", "ping"), nastyString, nastyJson),
      idempotencyKey: nastyString,
      model: fc.oneof(fc.constantFrom("offline/echo", "openai/x", "nope"), nastyString),
      timeoutSeconds: fc.oneof(fc.integer({ min: -5, max: 300_000 }), nastyJson),
      queue: nastyJson,
      trigger: nastyString,
      thinking: nastyString,
    },
    { requiredKeys: [] },
  ),
  nastyJson,
);

export const HTTP_METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"];
const ROUTE_SHAPES = ["/v1/runs/{}", "/v1/runs/{}/wait", "/v1/runs/{}/events", "/v1/runs/{}/abort", "/v1/sessions/{}/history", "/v1/{}", "/{}", "/v1/agent/{}"];

/** A raw path segment: encoded noise, or noise whose `%` escapes may be malformed. */
const rawSegment = fc.oneof(
  nastyString.map((s) => encode(s)),
  nastyString.map((s) => s.replace(/[/?#\s]/g, "").replace(/[^\x21-\x7e]/g, (c) => encode(c))),
  fc.constantFrom("%ZZ", "%", "%E0%A4%A", "%C3%28", "%ED%A0%80", "%00", "%2F", "..", "run_missing", ...PROTOTYPE_NAMES),
);

export const restPath = fc.tuple(fc.constantFrom(...ROUTE_SHAPES), rawSegment).map(([shape, segment]) => shape.replace("{}", segment || "x"));

/** A raw query string: prototype names and noise as keys, repeated keys, malformed escapes. */
export const queryString = fc
  .array(fc.tuple(fc.oneof(fc.constantFrom(...PROTOTYPE_NAMES, "after", "limit"), nastyString), fc.oneof(nastyString, fc.integer().map(String))), { maxLength: 4 })
  .chain((pairs) =>
    fc.constantFrom("encoded", "raw").map((how) =>
      pairs
        .map(([k, v]) => (how === "encoded" ? `${encode(k)}=${encode(v)}` : `${k.replace(/[#\s&]/g, "")}=${v.replace(/[#\s&]/g, "")}`))
        .join("&"),
    ),
  );

export const WS_METHODS = ["connect", "agent", "agent.wait", "agents.list", "sessions.subscribe", "sessions.unsubscribe", "sessions.list", "sessions.history", "runs.abort", "chat.abort", "events.replay"];

/** WebSocket `req` frames: a known or inherited or noise method, with params near-valid or noise. */
export const wsRequest = fc.record({
  method: fc.oneof(fc.constantFrom(...WS_METHODS), fc.constantFrom(...PROTOTYPE_NAMES), nastyString),
  params: fc.oneof(
    nastyJson,
    fc.record(
      {
        sessionKey: fc.oneof(fc.constant("fuzz-ws"), nastyString),
        runId: fc.oneof(fc.constant("run_missing"), nastyString),
        message: fc.oneof(fc.constant("hi"), nastyString),
        timeoutMs: fc.oneof(fc.integer({ min: -1, max: 50 }), nastyJson),
        afterSeq: fc.oneof(fc.integer({ min: -1, max: 5 }), nastyJson),
        limit: fc.oneof(fc.integer({ min: -1, max: 2000 }), nastyJson),
        idempotencyKey: nastyString,
        auth: nastyJson,
      },
      { requiredKeys: [] },
    ),
  ),
});

/** Frames that are not a `req`: not JSON, JSON of another shape, a `req` missing parts. */
export const wsJunkFrame = fc.oneof(
  fc.string({ maxLength: 200 }).filter((s) => s.length > 0),
  jsonText(nastyJson),
  jsonText(fc.record({ type: fc.oneof(fc.constant("req"), nastyString), id: nastyJson, method: nastyJson }, { requiredKeys: [] })),
);

/** Bodies of SQS run-queue messages: pointers to runs that do not exist, or noise. */
export const sqsBody = fc.oneof(
  fc.string({ maxLength: 300 }),
  jsonText(nastyJson),
  jsonText(fc.record({ v: fc.oneof(fc.constant(1), nastyJson), runId: fc.oneof(fc.constant("run_missing"), nastyString) }, { requiredKeys: [] })),
);

/** Step Functions task inputs: noise, or pointers whose parts are noise. */
export const taskInput = fc.oneof(
  nastyJson,
  fc.record(
    {
      runId: fc.oneof(fc.constantFrom("run_missing", "run_fuzz"), nastyString),
      loop: nastyJson,
      decision: fc.oneof(nastyJson, fc.record({ action: fc.constantFrom("attempt", "finalize", "wait", "compact", "continue_as_new"), status: nastyString }, { requiredKeys: ["action"] })),
      crash: fc.oneof(nastyJson, fc.record({ Error: nastyString, Cause: nastyString }, { requiredKeys: ["Error"] })),
    },
    { requiredKeys: [] },
  ),
);
