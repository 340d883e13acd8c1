import type { APIGatewayProxyEvent } from "aws-lambda";
import type * as z from "zod";
import { acceptInbound } from "../../shared/channels/accept";
import { normalizeHook, HookBodySchema } from "../../shared/channels/hook-inbound";
import type { Normalized } from "../../shared/channels/inbound";
import { verifySlackSignature, verifyStandardWebhook, verifyTelegramSecret } from "../../shared/channels/signatures";
import { normalizeSlack, SlackEnvelopeSchema } from "../../shared/channels/slack-inbound";
import { normalizeTelegram, TelegramUpdateSchema } from "../../shared/channels/telegram-inbound";
import { header, json, MAX_BODY_BYTES, validate } from "../../shared/http/rest";
import { ApiError } from "../../shared/protocol/errors";
import type { AppDeps } from "../../shared/runtime/app-deps";
import type { PublicRoute } from "./routes";

/**
 * Channel webhooks (issue 13). No bearer token: the platform's signature is
 * the authentication, checked on the raw bytes before anything is parsed or
 * written. Then normalize, deduplicate, accept into the normal intake, and
 * answer at once; the agent never runs inside the request.
 */
function rawBody(event: APIGatewayProxyEvent): Buffer {
  const raw = event.isBase64Encoded && event.body ? Buffer.from(event.body, "base64") : Buffer.from(event.body ?? "", "utf8");
  if (raw.length > MAX_BODY_BYTES) throw new ApiError("PAYLOAD_TOO_LARGE", `request body exceeds ${MAX_BODY_BYTES} bytes`);
  return raw;
}

function parseJson<T extends z.ZodType>(schema: T, raw: Buffer): z.infer<T> {
  let value: unknown;
  try {
    value = JSON.parse(raw.toString("utf8"));
  } catch {
    throw new ApiError("INVALID_REQUEST", "request body is not valid JSON");
  }
  return validate(schema, value) as z.infer<T>;
}

const unauthorized = () => new ApiError("UNAUTHORIZED", "missing or invalid signature");

export const postTelegram: PublicRoute = async (deps, { event, params }) => {
  const account = deps.config.channels.telegram.accounts[params.accountId];
  if (!account) throw new ApiError("NOT_FOUND", `telegram account ${params.accountId} not found`);
  const raw = rawBody(event);
  if (!verifyTelegramSecret(account.webhookSecret, header(event, "x-telegram-bot-api-secret-token"))) throw unauthorized();
  const update = parseJson(TelegramUpdateSchema, raw);
  return answer(deps, normalizeTelegram(params.accountId, account, update));
};

export const postSlack: PublicRoute = async (deps, { event, params }) => {
  const account = deps.config.channels.slack.accounts[params.accountId];
  if (!account) throw new ApiError("NOT_FOUND", `slack account ${params.accountId} not found`);
  const raw = rawBody(event);
  const signed = { timestamp: header(event, "x-slack-request-timestamp"), signature: header(event, "x-slack-signature") };
  if (!verifySlackSignature(account.signingSecret, signed, raw, Date.now())) throw unauthorized();
  const envelope = parseJson(SlackEnvelopeSchema, raw);
  if (envelope.type === "url_verification") return json(200, { challenge: envelope.challenge });
  if (envelope.type !== "event_callback") return json(200, { ok: true, ignored: envelope.type });
  return answer(deps, normalizeSlack(params.accountId, account, envelope));
};

export const postHook: PublicRoute = async (deps, { event, params }) => {
  const hook = deps.config.channels.hooks[params.hookId];
  if (!hook) throw new ApiError("NOT_FOUND", `hook ${params.hookId} not found`);
  const raw = rawBody(event);
  const signed = { id: header(event, "webhook-id"), timestamp: header(event, "webhook-timestamp"), signature: header(event, "webhook-signature") };
  if (!verifyStandardWebhook(hook.secret, signed, raw, Date.now())) throw unauthorized();
  const body = parseJson(HookBodySchema, raw);
  const normalized = normalizeHook(params.hookId, signed.id!, body);
  if (normalized.kind !== "message") return json(200, { ok: true });
  const accepted = await acceptInbound(deps, normalized.message);
  // Refused by the session lane: the caller learns it as a REST caller does (429 SESSION_BUSY) and may send again.
  if (accepted.refused) throw accepted.refused;
  return json(accepted.duplicate ? 200 : 202, { runId: accepted.runId, sessionKey: accepted.sessionKey, ...(accepted.duplicate ? { duplicate: true } : {}) });
};

async function answer(deps: AppDeps, normalized: Normalized) {
  if (normalized.kind === "ignore") return json(200, { ok: true, ignored: normalized.reason });
  // The typing indicator / reaction goes out when the run's attempt starts: nothing but the accept before the 200.
  const accepted = await acceptInbound(deps, normalized.message);
  // Refused by the session lane: still 200 (the platform would redeliver anything else); the chat got the notice.
  if (accepted.refused) return json(200, { ok: true, refused: accepted.refused.details?.reason ?? "busy" });
  return json(200, { ok: true, runId: accepted.runId, ...(accepted.duplicate ? { duplicate: true } : {}) });
}

/** Channel routes: matched before the bearer-token check (functions/rest-api/app.ts). */
export const CHANNEL_ROUTES = [
  { method: "POST", path: "/v1/channels/telegram/{accountId}", route: postTelegram },
  { method: "POST", path: "/v1/channels/slack/{accountId}", route: postSlack },
  { method: "POST", path: "/v1/hooks/{hookId}", route: postHook },
];
