import { postJson } from "./http-post";
import { failure, type PlatformResult } from "./platform-call";

/** The Slack Web API calls the runner makes (chat.postMessage, chat.update, reactions.add). */
export interface SlackApi {
  postMessage(input: { channel: string; text: string; threadTs?: string }): Promise<PlatformResult<{ ts: string }>>;
  update(input: { channel: string; ts: string; text: string }): Promise<PlatformResult<void>>;
  deleteMessage(input: { channel: string; ts: string }): Promise<PlatformResult<void>>;
  addReaction(input: { channel: string; ts: string; name: string }): Promise<PlatformResult<void>>;
}

/** Slack truncates a message's text past 40,000 characters; split well before it. */
export const SLACK_TEXT_LIMIT = 39_000;

/** `timeoutMs`: of each call (http-post.ts's default when absent). */
export function createSlackApi(baseUrl: string, botToken: string, timeoutMs?: number): SlackApi {
  const call = async (method: string, params: Record<string, unknown>): Promise<PlatformResult<Record<string, unknown>>> => {
    const out = await postJson(`${baseUrl.replace(/\/$/, "")}/${method}`, JSON.stringify(params), { headers: { authorization: `Bearer ${botToken}` }, ...(timeoutMs !== undefined ? { timeoutMs } : {}) });
    let answer: Record<string, unknown> | undefined;
    try {
      answer = JSON.parse(out.body) as Record<string, unknown>;
    } catch {
      answer = undefined;
    }
    if (out.status === 200 && answer?.ok === true) return { ok: true, data: answer };
    const retryAfter = out.retryAfterHeader !== undefined ? Number(out.retryAfterHeader) : undefined;
    const error = typeof answer?.error === "string" ? answer.error : (out.error ?? `HTTP ${out.status}`);
    // Slack answers most failures 200 {ok:false}: those are not retryable (invalid_auth, channel_not_found, ...).
    return failure(out.status === 200 ? 400 : out.status, `${method}: ${error}`, retryAfter);
  };
  return {
    async postMessage({ channel, text, threadTs }) {
      const out = await call("chat.postMessage", { channel, text, ...(threadTs ? { thread_ts: threadTs } : {}) });
      return out.ok ? { ok: true, data: { ts: String(out.data.ts) } } : out;
    },
    async update({ channel, ts, text }) {
      const out = await call("chat.update", { channel, ts, text });
      return out.ok ? { ok: true, data: undefined } : out;
    },
    async deleteMessage({ channel, ts }) {
      const out = await call("chat.delete", { channel, ts });
      return out.ok ? { ok: true, data: undefined } : out;
    },
    async addReaction({ channel, ts, name }) {
      const out = await call("reactions.add", { channel, timestamp: ts, name });
      return out.ok || /already_reacted/.test(out.error) ? { ok: true, data: undefined } : out;
    },
  };
}
