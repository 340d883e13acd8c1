/**
 * One deployed function, run the way Lambda runs it: each sandbox is a
 * worker thread holding its own module instances and its own `process.env`
 * (exactly the environment the deployer built), one invocation at a time;
 * concurrent invocations get more sandboxes, idle ones are reused (warm
 * starts). A sandbox that outlives the function's Timeout is stopped, like
 * Lambda's, and the caller gets `Sandbox.Timedout` with Lambda's message.
 * The event and the result cross the boundary as JSON (6 MB each way).
 * A sandbox idle for sandboxIdleMs() is stopped (Lambda reaps idle execution
 * environments too, after minutes): the local stack's memory goes back to its
 * idle size between bursts instead of keeping every sandbox it ever needed.
 * Past a soft cap tied to the machine's cores, an invocation that finds every
 * sandbox busy waits for one while they keep coming free (spawn-gate.ts):
 * locally a new sandbox adds a cold start, not CPU.
 */
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { defaultSpawnPolicy, RECHECK_MS, SpawnGate, type SpawnPolicy } from "./spawn-gate";
import { LambdaFunctionError, LambdaServiceError, LAMBDA_SYNC_PAYLOAD_LIMIT_BYTES, LAMBDA_TIMEOUT_ERROR_TYPE, LAMBDA_RESPONSE_TOO_LARGE_ERROR_TYPE, type LambdaErrorPayload } from "../lambda-context";

const BOOTSTRAP = fileURLToPath(new URL("./bootstrap.mjs", import.meta.url));
/** How long an idle sandbox stays warm. Lambda keeps them for minutes; locally memory is the scarcer resource. */
export const SANDBOX_IDLE_MS = 60_000;

/**
 * The idle reap time: LOCAL_SANDBOX_IDLE_MS (a positive whole number of ms)
 * when set, else SANDBOX_IDLE_MS. The memory bench sets it short so an idle
 * sample is taken with every sandbox gone (docs/local-memory.md).
 */
export function sandboxIdleMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.LOCAL_SANDBOX_IDLE_MS?.trim();
  if (!raw) return SANDBOX_IDLE_MS;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`LOCAL_SANDBOX_IDLE_MS must be a positive whole number of milliseconds, got ${JSON.stringify(raw)}`);
  return value;
}

export interface FunctionDefinition {
  name: string;
  arn: string;
  /** The asset folder (LAMBDA_TASK_ROOT). */
  codeDir: string;
  handler: string;
  timeoutSeconds: number;
  memoryMb: number;
  /** The complete environment of the sandbox. */
  environment: Record<string, string>;
  /** Sandboxes that may run at once (reserved concurrency, else the local cap). */
  maxConcurrency: number;
}

/**
 * A sandbox's V8 limits: the old generation may use the function's MemorySize
 * (Lambda's Node.js runtime gives it about 90% of it, the rest is new space). LOCAL_SANDBOX_YOUNG_GENERATION_MB
 * (diagnostics, docs/local-memory.md) caps the young generation of every
 * sandbox; unset, V8's default (16 MB semi-spaces) applies.
 */
export function sandboxResourceLimits(memoryMb: number, env: NodeJS.ProcessEnv = process.env): { maxOldGenerationSizeMb: number; maxYoungGenerationSizeMb?: number } {
  const young = Number(env.LOCAL_SANDBOX_YOUNG_GENERATION_MB);
  return { maxOldGenerationSizeMb: Math.max(64, memoryMb), ...(Number.isFinite(young) && young > 0 ? { maxYoungGenerationSizeMb: young } : {}) };
}

/** One idle sandbox's heap (diagnostics) and how many invocations it served. */
export type SandboxHeap = NodeJS.MemoryUsage & { invocations: number };

/** Told when an invocation waits for a sandbox and when it gets one (the local API Gateway's timer does not count the wait). */
export interface QueueSignals {
  queued(): void;
  started(): void;
}

/** Where a sandbox's stdout/stderr lines go (CloudWatch Logs, locally). */
export type LogSink = (functionName: string, line: string) => void;

interface Sandbox {
  worker: Worker;
  busy: boolean;
  /** Set while the sandbox is idle: stops it after the pool's idle time. */
  reaper?: NodeJS.Timeout;
  pending?: { requestId: string; resolve: (json: string) => void; reject: (error: Error) => void; timer?: NodeJS.Timeout; onChunk?: (chunk: Buffer) => void };
  /** Settles when the runtime has imported the handler (Lambda's init phase). */
  initialized: Promise<void>;
}

export class FunctionPool {
  private readonly sandboxes = new Set<Sandbox>();
  private readonly waiting: (() => void)[] = [];
  private readonly gate: SpawnGate;
  private closed = false;
  /** Invocations started (benchmarks and tests read it). */
  invocations = 0;
  coldStarts = 0;
  /** Environment variables the function's code read and its environment does not have. */
  readonly missingEnvReads = new Set<string>();

  constructor(
    readonly definition: FunctionDefinition,
    private readonly logSink: LogSink,
    private readonly idleMs = sandboxIdleMs(),
    policy: SpawnPolicy = defaultSpawnPolicy(),
  ) {
    this.gate = new SpawnGate(policy);
  }

  /** Sandboxes alive now, busy or idle (tests read it). */
  sandboxCount(): number {
    return this.sandboxes.size;
  }

  /** A synchronous (RequestResponse) invocation: the result as JSON text, or a LambdaFunctionError. */
  async invokeJson(payloadJson: string, signals?: QueueSignals): Promise<string> {
    if (Buffer.byteLength(payloadJson) > LAMBDA_SYNC_PAYLOAD_LIMIT_BYTES) {
      throw new LambdaServiceError("RequestEntityTooLargeException", `Request must be smaller than ${LAMBDA_SYNC_PAYLOAD_LIMIT_BYTES} bytes for the InvokeFunction operation`);
    }
    const sandbox = await this.acquire(signals);
    this.invocations += 1;
    try {
      const result = await this.run(sandbox, payloadJson);
      if (Buffer.byteLength(result) > LAMBDA_SYNC_PAYLOAD_LIMIT_BYTES) {
        throw new LambdaFunctionError({
          errorType: LAMBDA_RESPONSE_TOO_LARGE_ERROR_TYPE,
          errorMessage: `Response payload size (${Buffer.byteLength(result)} bytes) exceeded maximum allowed payload size (${LAMBDA_SYNC_PAYLOAD_LIMIT_BYTES} bytes).`,
        });
      }
      return result;
    } finally {
      this.release(sandbox);
    }
  }

  /**
   * InvokeWithResponseStream: a handler wrapped in `awslambda.streamifyResponse`
   * writes its response stream, each chunk reaches `onChunk` as written; the
   * promise settles when the handler is done (a LambdaFunctionError if it threw).
   */
  async invokeStream(event: unknown, onChunk: (chunk: Buffer) => void, signals?: QueueSignals): Promise<void> {
    const sandbox = await this.acquire(signals);
    this.invocations += 1;
    try {
      await this.run(sandbox, JSON.stringify(event ?? {}), onChunk);
    } finally {
      this.release(sandbox);
    }
  }

  async invoke<T>(event: unknown, signals?: QueueSignals): Promise<T> {
    return JSON.parse(await this.invokeJson(event === undefined ? "{}" : JSON.stringify(event), signals)) as T;
  }

  /** Starts one sandbox ahead of traffic (a provisioned-concurrency-like warm start). */
  async warm(): Promise<void> {
    if (this.sandboxes.size === 0) this.release(this.spawn());
  }

  /**
   * Fault injection (infra/local/faults.ts): every running invocation dies
   * now — its runtime crashes (Runtime.ExitError) or it is stopped as past
   * its timeout (Sandbox.Timedout). Settles when the sandboxes are gone.
   */
  async killRunning(kind: "crash" | "timeout"): Promise<number> {
    const running = [...this.sandboxes].filter((sandbox) => sandbox.busy && sandbox.pending);
    await Promise.all(
      running.map(async (sandbox) => {
        const pending = sandbox.pending!;
        if (kind === "timeout") {
          clearTimeout(pending.timer);
          sandbox.pending = undefined;
          this.sandboxes.delete(sandbox);
          pending.reject(new LambdaFunctionError({
            errorType: LAMBDA_TIMEOUT_ERROR_TYPE,
            errorMessage: `RequestId: ${pending.requestId} Error: Task timed out after ${this.definition.timeoutSeconds.toFixed(2)} seconds`,
          }));
        }
        await sandbox.worker.terminate().catch(() => undefined);
      }),
    );
    return running.length;
  }

  /** Diagnostics (bench/mem-probe.ts): each idle sandbox's own heap (process.memoryUsage() inside it) and the invocations it served. */
  async idleHeaps(options: { gc?: boolean } = {}): Promise<SandboxHeap[]> {
    return Promise.all(
      this.idleSandboxes().map((sandbox) =>
        this.probe<{ usage: NodeJS.MemoryUsage; invocations: number }>(sandbox, { probe: "heap", gc: options.gc === true }).then((m) => ({ ...m.usage, invocations: m.invocations })),
      ),
    );
  }

  /** Diagnostics: each idle sandbox writes a heap snapshot of its own isolate (after a GC) to `${prefix}-<n>.heapsnapshot`; the files written. */
  async snapshotIdle(prefix: string): Promise<string[]> {
    const files: string[] = [];
    // One at a time: a snapshot needs about twice the heap it writes.
    for (const [index, sandbox] of this.idleSandboxes().entries()) {
      files.push((await this.probe<{ file: string }>(sandbox, { probe: "snapshot", file: `${prefix}-${index}.heapsnapshot` })).file);
    }
    return files;
  }

  private idleSandboxes(): Sandbox[] {
    return [...this.sandboxes].filter((sandbox) => !sandbox.busy);
  }

  private probe<T>(sandbox: Sandbox, request: { probe: string } & Record<string, unknown>): Promise<T> {
    return new Promise<T>((resolve) => {
      const onMessage = (message: { probe?: string } & T) => {
        if (message.probe !== request.probe) return;
        sandbox.worker.off("message", onMessage);
        resolve(message);
      };
      sandbox.worker.on("message", onMessage);
      sandbox.worker.postMessage(request);
    });
  }

  busyCount(): number {
    return [...this.sandboxes].filter((s) => s.busy).length;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const sandbox of this.sandboxes) clearTimeout(sandbox.reaper);
    await Promise.all([...this.sandboxes].map((sandbox) => sandbox.worker.terminate().catch(() => undefined)));
    this.sandboxes.clear();
  }

  /** A sandbox for one invocation; past maxConcurrency it waits for one (signals say when, and when it ends). */
  private async acquire(signals?: QueueSignals): Promise<Sandbox> {
    let waited = false;
    try {
      return await this.takeSandbox(() => {
        if (!waited) signals?.queued();
        waited = true;
      });
    } finally {
      if (waited) signals?.started();
    }
  }

  private async takeSandbox(onWait: () => void): Promise<Sandbox> {
    for (;;) {
      if (this.closed) throw new LambdaServiceError("ResourceNotFoundException", `Function not found: ${this.definition.arn}`);
      // The oldest idle sandbox first (a Set iterates in insertion order): work goes to the warmest code.
      const idle = [...this.sandboxes].find((s) => !s.busy);
      if (idle) {
        clearTimeout(idle.reaper);
        idle.reaper = undefined;
        idle.busy = true;
        return idle;
      }
      if (this.sandboxes.size < this.definition.maxConcurrency) {
        if (!this.gate.waits(this.sandboxes.size)) {
          const sandbox = this.spawn();
          sandbox.busy = true;
          return sandbox;
        }
        onWait();
        await this.nextRelease(RECHECK_MS);
        continue;
      }
      onWait();
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
  }

  /** Resolves when a sandbox is released, or after `ms`. */
  private nextRelease(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        const index = this.waiting.indexOf(wake);
        if (index >= 0) this.waiting.splice(index, 1);
        resolve();
      }, ms);
      this.waiting.push(wake);
    });
  }

  private release(sandbox: Sandbox): void {
    sandbox.busy = false;
    this.gate.noteProgress();
    if (this.sandboxes.has(sandbox) && !this.closed) {
      sandbox.reaper = setTimeout(() => this.reap(sandbox), this.idleMs);
      sandbox.reaper.unref();
    }
    this.waiting.shift()?.();
  }

  /** Stops a sandbox that stayed idle; the next invocation starts a fresh one (a cold start). */
  private reap(sandbox: Sandbox): void {
    if (sandbox.busy || !this.sandboxes.has(sandbox)) return;
    this.sandboxes.delete(sandbox);
    void sandbox.worker.terminate().catch(() => undefined);
  }

  private spawn(): Sandbox {
    const { definition } = this;
    this.coldStarts += 1;
    const worker = new Worker(BOOTSTRAP, {
      env: definition.environment,
      // Not the parent's loader flags (tsx): a sandbox runs plain JavaScript, like Lambda.
      execArgv: [],
      stdout: true,
      stderr: true,
      resourceLimits: sandboxResourceLimits(definition.memoryMb),
      name: definition.name,
    });
    worker.unref();
    let initDone!: () => void;
    const sandbox: Sandbox = { worker, busy: false, initialized: new Promise<void>((resolve) => (initDone = resolve)) };
    this.gate.noteSpawn();
    void sandbox.initialized.then(() => this.gate.noteProgress());
    this.pipeLogs(worker);
    worker.on("message", (message: { initDone?: boolean; requestId: string; ok: boolean; payload?: string; chunk?: Uint8Array; error?: LambdaErrorPayload; missingEnvReads?: string[] }) => {
      if (message.initDone) return initDone();
      for (const name of message.missingEnvReads ?? []) this.missingEnvReads.add(name);
      const pending = sandbox.pending;
      if (!pending || pending.requestId !== message.requestId) return;
      if (message.chunk) {
        pending.onChunk?.(Buffer.from(message.chunk));
        return;
      }
      sandbox.pending = undefined;
      clearTimeout(pending.timer);
      if (message.ok) pending.resolve(message.payload ?? "null");
      else pending.reject(new LambdaFunctionError(message.error!));
    });
    const crash = (error: LambdaErrorPayload) => {
      initDone();
      this.sandboxes.delete(sandbox);
      const pending = sandbox.pending;
      sandbox.pending = undefined;
      if (pending) {
        clearTimeout(pending.timer);
        pending.reject(new LambdaFunctionError(error));
      }
      this.waiting.shift()?.();
    };
    worker.on("error", (error) => crash({ errorType: "Runtime.ExitError", errorMessage: `RequestId: sandbox crashed: ${error.message}`, trace: (error.stack ?? "").split("\n") }));
    worker.on("exit", (code) => crash({ errorType: "Runtime.ExitError", errorMessage: `Runtime exited with error: exit status ${code}` }));
    this.sandboxes.add(sandbox);
    return sandbox;
  }

  private run(sandbox: Sandbox, payload: string, onChunk?: (chunk: Buffer) => void): Promise<string> {
    const requestId = randomUUID();
    const timeoutMs = this.definition.timeoutSeconds * 1000;
    return new Promise<string>((resolve, reject) => {
      sandbox.pending = { requestId, resolve, reject, ...(onChunk ? { onChunk } : {}) };
      // Lambda imports the handler (the init phase) before the invocation's
      // timeout starts: a cold start on a busy machine must not eat the
      // function's Timeout. The init error itself is the invocation's answer.
      void sandbox.initialized.then(() => {
        const pending = sandbox.pending;
        if (pending?.requestId !== requestId) return; // crashed or killed during init
        pending.timer = setTimeout(() => {
          // Lambda stops a timed-out sandbox; the next invocation gets a fresh one.
          sandbox.pending = undefined;
          this.sandboxes.delete(sandbox);
          void sandbox.worker.terminate();
          reject(new LambdaFunctionError({
            errorType: LAMBDA_TIMEOUT_ERROR_TYPE,
            errorMessage: `RequestId: ${requestId} Error: Task timed out after ${this.definition.timeoutSeconds.toFixed(2)} seconds`,
          }));
        }, timeoutMs);
        sandbox.worker.postMessage({ requestId, payload, deadline: Date.now() + timeoutMs, invokedFunctionArn: this.definition.arn });
      });
    });
  }

  private pipeLogs(worker: Worker): void {
    for (const stream of [worker.stdout, worker.stderr]) {
      let buffered = "";
      stream.setEncoding("utf8");
      stream.on("data", (chunk: string) => {
        buffered += chunk;
        let newline = buffered.indexOf("\n");
        while (newline >= 0) {
          this.logSink(this.definition.name, buffered.slice(0, newline));
          buffered = buffered.slice(newline + 1);
          newline = buffered.indexOf("\n");
        }
      });
    }
  }
}
