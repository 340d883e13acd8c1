import type { CustomToolConfig } from "../../config/attempt-config";
import type { ToolDefinition } from "./types";

/** Custom tools answer with at most this much text; the lifecycle caps it again for the context. */
const MAX_RESPONSE_BYTES = 1_000_000;

/**
 * A tool declared in configuration: its arguments are sent as JSON to an
 * operator-chosen HTTP endpoint (a Lambda function URL, an internal service)
 * and the response body is the result. The URL is the operator's, not the
 * model's, so the SSRF guard does not apply; the request carries the run and
 * the tool call id so the endpoint can deduplicate (mutating tools default on).
 * Redirects are never followed: the request carries the operator's headers
 * (credentials for that endpoint), and a redirect would hand them to
 * whatever host the endpoint, or whoever controls it, names. A 3xx is an
 * error result that names where it pointed.
 */
export function createCustomHttpTool(config: CustomToolConfig): ToolDefinition {
  return {
    name: config.name,
    description: config.description,
    parameters: config.parameters,
    mutating: config.mutating,
    timeoutMs: config.timeoutSeconds * 1000,
    async execute(args, context) {
      const response = await fetch(config.url, {
        method: config.method,
        headers: {
          "content-type": "application/json",
          "x-agent-run-id": context.runId,
          "x-agent-tool-call-id": context.toolCallId ?? "",
          "idempotency-key": context.toolCallId ?? "",
          ...config.headers,
        },
        body: JSON.stringify(args),
        signal: AbortSignal.any([context.signal, AbortSignal.timeout(config.timeoutSeconds * 1000)]),
        redirect: "manual",
      });
      if (response.status >= 300 && response.status < 400) {
        await response.body?.cancel();
        const location = response.headers.get("location") ?? "(no location)";
        return { content: `HTTP ${response.status}: the tool endpoint redirected to ${location}; redirects are not followed`, isError: true };
      }
      const text = (await response.text()).slice(0, MAX_RESPONSE_BYTES);
      if (!response.ok) return { content: `HTTP ${response.status}: ${text}`, isError: true };
      return { content: text };
    },
  };
}
