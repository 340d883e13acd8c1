// The web console: one page, no framework. State lives here; api.js talks, render.js draws.
import { GatewaySocket, RestClient } from "./api.js";
import { attemptItem, decisionItem, el, runRow, summaryList, transcriptItem } from "./render.js";

const $ = (id) => document.getElementById(id);
const KEY_STORAGE = "agent-runner-console:key";
const MAX_RUNS_SHOWN = 20;

const state = {
  rest: undefined,
  socket: undefined,
  sessionKey: undefined,
  selectedRunId: undefined,
  /** runId -> highest seq drawn (events can arrive twice: from the `agent` request and the subscription). */
  seen: new Map(),
  liveRunId: undefined,
  approvals: new Map(),
  extraRunIds: [],
};

function setStatus(text) {
  $("status").textContent = text;
}

/** Endpoints: the form, else config.json next to the page (the deployed site), else this origin. */
async function defaults() {
  const config = await fetch("/console/config.json").then((r) => (r.ok ? r.json() : {})).catch(() => ({}));
  const wsOrigin = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`;
  return { restUrl: config.restUrl ?? location.origin, webSocketUrl: config.webSocketUrl ?? wsOrigin };
}

async function connect(key) {
  const fallback = await defaults();
  const restUrl = $("rest-url").value.trim() || fallback.restUrl;
  const wsUrl = $("ws-url").value.trim() || fallback.webSocketUrl;
  state.socket?.close();
  state.rest = new RestClient(restUrl, key);
  state.socket = new GatewaySocket(wsUrl, key, { onEvent, onClose: () => setStatus("Disconnected: press Connect to reconnect") });
  setStatus("Connecting…");
  await state.socket.open();
  sessionStorage.setItem(KEY_STORAGE, key);
  setStatus(`Connected to ${restUrl}`);
  document.body.dataset.connected = "true";
  await refreshSessions();
}

async function refreshSessions() {
  const { sessions } = await state.rest.get("/v1/sessions?limit=50");
  $("sessions").replaceChildren(
    ...sessions.map((s) =>
      el("li", {}, el("button", { type: "button", "aria-current": s.sessionKey === state.sessionKey ? "true" : "false", onclick: () => selectSession(s.sessionKey) }, s.sessionKey)),
    ),
  );
}

async function selectSession(sessionKey) {
  if (state.sessionKey !== sessionKey) state.extraRunIds = [];
  state.sessionKey = sessionKey;
  $("session-key").value = sessionKey;
  $("session-title").textContent = `Session ${sessionKey}`;
  for (const button of $("sessions").querySelectorAll("button")) button.setAttribute("aria-current", String(button.textContent === sessionKey));
  await state.socket.request("sessions.subscribe", { sessionKey });
  await refreshSession();
}

async function refreshSession() {
  if (!state.sessionKey) return;
  const history = await state.socket.request("sessions.history", { sessionKey: state.sessionKey, limit: 200 }).catch(() => ({ messages: [] }));
  $("transcript").replaceChildren(...history.messages.map(transcriptItem));
  const runIds = [...new Set([...history.messages.map((m) => m.runId).filter(Boolean), ...state.extraRunIds])].slice(-MAX_RUNS_SHOWN).reverse();
  const traces = await Promise.all(runIds.map((runId) => state.rest.get(`/v1/runs/${encodeURIComponent(runId)}/trace`).catch(() => undefined)));
  $("runs").tBodies[0].replaceChildren(...traces.filter(Boolean).map((trace) => runRow(trace, trace.runId === state.selectedRunId, selectRun)));
  if (state.selectedRunId) await showRun(state.selectedRunId);
}

async function selectRun(runId) {
  state.selectedRunId = runId;
  for (const row of $("runs").tBodies[0].rows) row.setAttribute("aria-selected", String(row.dataset.runId === runId));
  await showRun(runId);
}

async function showRun(runId) {
  const trace = await state.rest.get(`/v1/runs/${encodeURIComponent(runId)}/trace`);
  $("run-title").textContent = `Run ${runId}`;
  $("run-hint").hidden = true;
  $("run-summary").replaceChildren(...summaryList(trace));
  $("loop-path").replaceChildren(...trace.attempts.flatMap((step) => [attemptItem(step), decisionItem(step)]));
  $("run-view").dataset.status = trace.status;
}

// ----------------------------------------------------------------- live events

function onEvent(frame) {
  if (frame.event !== "agent") return;
  const { runId, seq, stream, data } = frame.payload;
  if (seq <= (state.seen.get(runId) ?? 0)) return;
  state.seen.set(runId, seq);
  if (stream === "lifecycle") return onLifecycle(runId, data);
  if (runId !== state.liveRunId) startLive(runId);
  if (stream === "assistant") {
    $("live-text").textContent = data.text ?? `${$("live-text").textContent}${data.delta ?? ""}`;
    $("live-text").dataset.deltas = String(Number($("live-text").dataset.deltas ?? 0) + 1);
  } else if (stream === "tool") logEvent(`tool ${data.phase} ${data.name ?? ""}${data.isError ? " (error)" : ""}`);
  else if (stream === "approval") onApproval(runId, data);
  else logEvent(`${stream} ${data.phase ?? ""}`);
}

function startLive(runId) {
  state.liveRunId = runId;
  $("live-run").textContent = `Run ${runId}: running`;
  $("live-run").dataset.state = "running";
  $("live-text").textContent = "";
  $("live-text").dataset.deltas = "0";
  $("live-events").replaceChildren();
}

function logEvent(text) {
  $("live-events").append(el("li", {}, `${new Date().toLocaleTimeString()} ${text}`));
}

function onLifecycle(runId, data) {
  if (data.phase === "start") {
    startLive(runId);
    logEvent(`start ${data.model ?? ""}`);
    return;
  }
  if (runId !== state.liveRunId) startLive(runId);
  if (data.phase === "end" || data.phase === "error") {
    const status = data.phase === "end" ? "ok" : data.status ?? "error";
    $("live-run").textContent = `Run ${runId}: ${status}${data.error ? ` — ${data.error}` : ""}`;
    $("live-run").dataset.state = status;
    logEvent(`${data.phase}${data.error ? `: ${data.error}` : ""}`);
    for (const [id, approval] of state.approvals) if (approval.runId === runId) state.approvals.delete(id);
    drawApprovals();
    void refreshSession().then(refreshSessions).catch((error) => setStatus(String(error)));
  } else logEvent(`lifecycle ${data.phase}`);
}

// ----------------------------------------------------------------- approvals

function onApproval(runId, data) {
  if (data.phase === "requested") {
    state.approvals.set(data.approvalId, { runId, ...data });
    logEvent(`approval requested for ${data.toolName}`);
  } else if (data.phase === "resolved") {
    state.approvals.delete(data.approvalId);
    logEvent(`approval ${data.decision}`);
  }
  drawApprovals();
}

async function resolveApproval(approval, decision) {
  try {
    await state.rest.post(`/v1/runs/${encodeURIComponent(approval.runId)}/approvals/${encodeURIComponent(approval.approvalId)}`, { decision });
    state.approvals.delete(approval.approvalId);
    drawApprovals();
  } catch (error) {
    setStatus(`Approval failed: ${error.message}`);
  }
}

function drawApprovals() {
  const items = [...state.approvals.values()].map((approval) =>
    el(
      "li",
      { dataset: { approvalId: approval.approvalId } },
      el("strong", {}, approval.toolName),
      el("code", {}, JSON.stringify(approval.args ?? {})),
      approval.expiresAt ? el("span", { class: "meta" }, `expires ${new Date(approval.expiresAt).toLocaleTimeString()}`) : null,
      el("button", { type: "button", onclick: () => resolveApproval(approval, "allow-once") }, "Allow once"),
      el("button", { type: "button", onclick: () => resolveApproval(approval, "allow-always") }, "Allow always"),
      el("button", { type: "button", onclick: () => resolveApproval(approval, "deny") }, "Deny"),
    ),
  );
  $("approvals").replaceChildren(...items);
  $("approvals-section").hidden = items.length === 0;
}

// ----------------------------------------------------------------- composer

async function send(sessionKey, message) {
  const params = { sessionKey, message, idempotencyKey: crypto.randomUUID() };
  const ack = await state.socket.request("agent", params, () => void refreshSession());
  state.extraRunIds.push(ack.runId);
  // The new run shows in the table at once (running), and again when it ends.
  if (state.sessionKey !== ack.sessionKey) await selectSession(ack.sessionKey);
  else void refreshSession().catch((error) => setStatus(String(error)));
  if (state.liveRunId !== ack.runId && !state.seen.has(ack.runId)) startLive(ack.runId);
  await refreshSessions();
}

function wire() {
  $("connect-form").addEventListener("submit", (event) => {
    event.preventDefault();
    connect($("api-key").value.trim()).catch((error) => setStatus(`Could not connect: ${error.message}`));
  });
  $("refresh-sessions").addEventListener("click", () => void refreshSessions().catch((error) => setStatus(String(error))));
  $("composer").addEventListener("submit", (event) => {
    event.preventDefault();
    if (!state.socket) return setStatus("Connect first");
    const message = $("message").value.trim();
    if (!message) return;
    send($("session-key").value.trim(), message)
      .then(() => ($("message").value = ""))
      .catch((error) => setStatus(`Send failed: ${error.message}`));
  });
  const saved = sessionStorage.getItem(KEY_STORAGE);
  if (saved) {
    $("api-key").value = saved;
    connect(saved).catch((error) => setStatus(`Could not connect: ${error.message}`));
  }
}

wire();
