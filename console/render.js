// DOM builders and formatting: no state, no network.

/** `el("li", {class: "x", dataset: {role}}, "text", child)` */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "dataset") Object.assign(node.dataset, value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) if (child !== undefined && child !== null) node.append(child instanceof Node ? child : String(child));
  return node;
}

export function formatMs(ms) {
  if (ms === undefined || ms === null) return "–";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

export function formatCost(usd) {
  if (usd === undefined || usd === null) return "–";
  return usd === 0 ? "$0" : `$${usd < 0.01 ? usd.toFixed(5) : usd.toFixed(3)}`;
}

export function formatTime(ms) {
  return ms ? new Date(ms).toLocaleTimeString() : "";
}

const shortId = (runId) => (runId.length > 14 ? `${runId.slice(0, 14)}…` : runId);

/** The loop's decision after an attempt, in the words of the outer loop (docs/outer-loop.md). */
export function describeDecision(decision) {
  if (!decision) return "no decision recorded";
  const why = decision.reason ? ` (${decision.reason.replaceAll("_", " ")})` : "";
  switch (decision.action) {
    case "attempt":
      if (decision.reason === "rotate_profile") return "rotate to the next auth profile, attempt again";
      if (decision.reason === "fallback_model") return "fall back to the next model, attempt again";
      if (decision.reason === "yield") return "continue in a fresh attempt (yielded before the Lambda deadline)";
      return `retry${why}`;
    case "wait":
      return `wait ${decision.waitSeconds} s, then retry${why}`;
    case "compact":
      return `compact the history (${decision.trigger})${decision.thenTruncate ? ", then truncate tool results" : ""}, attempt again`;
    case "truncate":
      return "truncate oversized tool results, attempt again";
    case "continue_as_new":
      return `continue in a new execution (generation ${decision.generation})`;
    case "finalize":
      return `finalize: ${decision.status}${why}${decision.errorKind ? ` — ${decision.errorKind}` : ""}`;
    default:
      return decision.action;
  }
}

export function attemptItem(step) {
  const what = step.outcome === "failed" ? `failed: ${step.failure?.kind ?? "unknown"}` : step.outcome;
  const tokens = step.usage ? `${step.usage.input} in / ${step.usage.output} out` : "";
  return el(
    "li",
    { dataset: { outcome: step.outcome, failureKind: step.failure?.kind ?? "" } },
    el("strong", {}, `Attempt ${step.n} · ${step.model}`),
    " — ",
    el("span", { class: step.outcome === "failed" ? "status-error" : "status-ok" }, what),
    el("div", { class: "meta" }, `${formatTime(step.startedAt)} · ${formatMs(step.durationMs)} · ${tokens}${step.costUsd ? ` · ${formatCost(step.costUsd)}` : ""}`),
    step.failure?.message ? el("div", { class: "meta" }, step.failure.message) : null,
  );
}

export function decisionItem(step) {
  const after = step.decidedAt && step.endedAt ? ` · decided ${formatMs(step.decidedAt - step.endedAt)} after` : "";
  return el("li", { class: "decision", dataset: { action: step.decision?.action ?? "none" } }, describeDecision(step.decision), el("span", { class: "meta" }, after));
}

export function runRow(trace, selected, onSelect) {
  const spend = trace.spend;
  return el(
    "tr",
    { "aria-selected": selected ? "true" : "false", dataset: { runId: trace.runId, status: trace.status } },
    el("td", {}, el("button", { type: "button", title: trace.runId, "aria-label": `Show run ${trace.runId}`, onclick: () => onSelect(trace.runId) }, shortId(trace.runId))),
    el("td", { class: `status-${trace.status}` }, trace.status),
    el("td", {}, trace.model),
    el("td", {}, formatMs(trace.durationMs)),
    el("td", {}, spend ? `${spend.input} / ${spend.output}` : "–"),
    el("td", {}, formatCost(spend?.costUsd)),
    el("td", {}, String(trace.attempts.length)),
  );
}

function textOfMessage(message) {
  if (typeof message.content === "string") return message.content;
  return (message.content ?? [])
    .map((block) => (block.type === "text" ? block.text : block.type === "tool_call" ? `→ ${block.name}(${JSON.stringify(block.arguments ?? block.args ?? {})})` : ""))
    .filter(Boolean)
    .join("\n");
}

export function transcriptItem(message) {
  const role = message.role === "tool_result" ? `tool result · ${message.toolName}` : message.role;
  return el("li", { dataset: { role: message.role, runId: message.runId ?? "" } }, el("span", { class: "role" }, role), textOfMessage(message));
}

export function summaryList(trace) {
  const rows = [
    ["Run", trace.runId],
    ["Session", trace.sessionKey],
    ["Status", trace.status],
    ["Model", trace.model],
    ["Accepted", formatTime(trace.acceptedAt)],
    ["Duration", formatMs(trace.durationMs)],
    ["Tokens", trace.spend ? `${trace.spend.input} in / ${trace.spend.output} out (${trace.spend.calls} calls)` : "–"],
    ["Cost", formatCost(trace.spend?.costUsd)],
  ];
  return rows.flatMap(([term, value]) => [el("dt", {}, term), el("dd", {}, value ?? "–")]);
}
