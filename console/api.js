// Clients of the runner's two APIs, as the docs describe them (docs/protocol.md, README "REST").

/** REST with the pasted key as the bearer token; errors carry the API's `{error:{code,message}}`. */
export class RestClient {
  constructor(baseUrl, key) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.key = key;
  }

  async request(method, path, body) {
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${this.key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    const parsed = text ? JSON.parse(text) : {};
    if (!response.ok) throw new Error(`${response.status} ${parsed.error?.code ?? ""} ${parsed.error?.message ?? parsed.message ?? ""}`.trim());
    return parsed;
  }

  get(path) {
    return this.request("GET", path);
  }

  post(path, body = {}) {
    return this.request("POST", path, body);
  }
}

/**
 * The WebSocket API in OpenClaw's frame shape: `connect` after the server's
 * `connect.challenge`, requests `{type:"req",id,method,params}`, answers
 * `{type:"res",id,ok,payload|error}`, events `{type:"event",event,payload}`.
 * `agent` answers twice on one id (the ack, then the final answer): the
 * second goes to `onFinal`.
 */
export class GatewaySocket {
  constructor(url, key, handlers) {
    this.url = url;
    this.key = key;
    this.handlers = handlers;
    this.pending = new Map();
    this.nextId = 1;
  }

  open() {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(this.url);
      this.socket = socket;
      let connected = false;
      socket.addEventListener("message", (message) => {
        const frame = JSON.parse(message.data);
        if (frame.type === "event" && frame.event === "connect.challenge" && !connected) {
          connected = true;
          const client = { id: "agent-runner-console", version: "1", platform: "web", mode: "ui" };
          // `surface-agent`: the console renders `agent` events; its "ui" mode alone would get the chat view.
          this.request("connect", { minProtocol: 3, maxProtocol: 3, client, caps: ["surface-agent"], role: "operator", scopes: ["operator.read", "operator.write", "operator.approvals"], auth: { token: this.key } })
            .then(resolve, reject);
          return;
        }
        this.dispatch(frame);
      });
      socket.addEventListener("close", () => {
        reject(new Error("WebSocket closed"));
        this.handlers.onClose?.();
      });
      socket.addEventListener("error", () => reject(new Error("WebSocket error")));
    });
  }

  dispatch(frame) {
    if (frame.type === "event") return this.handlers.onEvent?.(frame);
    if (frame.type !== "res") return;
    const waiter = this.pending.get(frame.id);
    if (!waiter) return;
    if (waiter.answered) {
      this.pending.delete(frame.id);
      return waiter.onFinal?.(frame);
    }
    waiter.answered = true;
    if (!waiter.onFinal) this.pending.delete(frame.id);
    if (frame.ok) waiter.resolve(frame.payload);
    else {
      this.pending.delete(frame.id);
      waiter.reject(new Error(`${frame.error?.code ?? "ERROR"}: ${frame.error?.message ?? "request failed"}`));
    }
  }

  request(method, params, onFinal) {
    const id = String(this.nextId++);
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, onFinal, answered: false });
      this.socket.send(JSON.stringify({ type: "req", id, method, params }));
    });
  }

  close() {
    this.socket?.close();
  }
}
