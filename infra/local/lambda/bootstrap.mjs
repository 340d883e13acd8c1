// The Lambda runtime inside one worker thread (one sandbox): imports the
// function's asset as Lambda does (`_HANDLER` = "<file>.<export>" under
// LAMBDA_TASK_ROOT), then runs one invocation at a time. The worker's
// process.env is exactly what the local deployer built for this function.
import { parentPort } from "node:worker_threads";
import { pathToFileURL } from "node:url";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import v8 from "node:v8";
import { runInNewContext } from "node:vm";

// Reads of variables the environment does not have are recorded and reported with each
// answer: code that expects configuration its template does not give it is caught in tests.
const missingEnvReads = new Set();
process.env = new Proxy(process.env, {
  get(target, key) {
    if (typeof key === "string" && !(key in target)) missingEnvReads.add(key);
    return Reflect.get(target, key);
  },
});

const taskRoot = process.env.LAMBDA_TASK_ROOT;
const [file, exportName] = splitHandler(process.env._HANDLER ?? "index.handler");
let handlerPromise;

function splitHandler(spec) {
  const dot = spec.lastIndexOf(".");
  return [spec.slice(0, dot), spec.slice(dot + 1)];
}

function loadHandler() {
  handlerPromise ??= (async () => {
    const candidates = [".mjs", ".js", ".cjs"].map((ext) => join(taskRoot, `${file}${ext}`));
    const path = candidates.find((candidate) => existsSync(candidate));
    if (!path) throw Object.assign(new Error(`Cannot find module '${file}'`), { name: "Runtime.ImportModuleError" });
    const mod = await import(pathToFileURL(path).href);
    const handler = mod[exportName] ?? mod.default?.[exportName];
    if (typeof handler !== "function") throw Object.assign(new Error(`${file}.${exportName} is undefined or not exported`), { name: "Runtime.HandlerNotFound" });
    return handler;
  })();
  return handlerPromise;
}

function errorPayload(error) {
  if (error instanceof Error) return { errorType: error.name, errorMessage: error.message, trace: (error.stack ?? "").split("\n") };
  return { errorType: typeof error, errorMessage: String(error), trace: [] };
}

function contextOf(message) {
  const noop = () => undefined;
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: process.env.AWS_LAMBDA_FUNCTION_NAME,
    functionVersion: process.env.AWS_LAMBDA_FUNCTION_VERSION,
    invokedFunctionArn: message.invokedFunctionArn,
    memoryLimitInMB: process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE,
    awsRequestId: message.requestId,
    logGroupName: process.env.AWS_LAMBDA_LOG_GROUP_NAME,
    logStreamName: process.env.AWS_LAMBDA_LOG_STREAM_NAME,
    getRemainingTimeInMillis: () => Math.max(0, message.deadline - Date.now()),
    done: noop,
    fail: noop,
    succeed: noop,
  };
}

// Response streaming as Lambda's Node.js runtime offers it: `awslambda.streamifyResponse` marks a
// handler, `HttpResponseStream.from` writes the JSON prelude (status, headers) and 8 NUL bytes
// before the body. Chunks go to the parent as they are written (InvokeWithResponseStream).
const STREAMING = Symbol.for("aws.lambda.runtime.handler.streaming");
globalThis.awslambda = {
  streamifyResponse(handler) {
    handler[STREAMING] = "response";
    return handler;
  },
  HttpResponseStream: class HttpResponseStream {
    static from(stream, metadata) {
      stream.setContentType?.("application/vnd.awslambda.http-integration-response");
      stream.write(JSON.stringify(metadata ?? {}));
      stream.write(new Uint8Array(8));
      return stream;
    }
  },
};

function responseStreamFor(requestId) {
  const stream = new Writable({
    write(chunk, _encoding, callback) {
      parentPort.postMessage({ requestId, chunk: Buffer.from(chunk) });
      callback();
    },
  });
  stream.setContentType = () => undefined;
  return stream;
}

async function invokeStreaming(handler, message) {
  const stream = responseStreamFor(message.requestId);
  const ended = new Promise((resolve) => stream.once("finish", resolve));
  await handler(JSON.parse(message.payload), stream, contextOf(message));
  if (!stream.writableEnded) stream.end();
  await ended;
  parentPort.postMessage({ requestId: message.requestId, ok: true, payload: "null", streamed: true, missingEnvReads: [...missingEnvReads] });
}

// Diagnostics only: a full GC of this sandbox's heap, so the probe reads live objects, not garbage.
function collectGarbage() {
  v8.setFlagsFromString("--expose-gc");
  runInNewContext("gc")();
}

// The init phase: the handler module is imported before the first invocation
// is handed over (the pool starts the invocation's timeout after this). A
// failed import is reported by the invocation that awaits it.
loadHandler().then(
  () => parentPort.postMessage({ initDone: true }),
  () => parentPort.postMessage({ initDone: true }),
);

// Invocations this sandbox served (diagnostics: does its live heap grow with them?).
let invocations = 0;

parentPort.on("message", async (message) => {
  // Diagnostics (bench/mem-probe.ts): this sandbox's own V8 heap, which the parent's figures do not include.
  if (message.probe === "heap") {
    if (message.gc) collectGarbage();
    return parentPort.postMessage({ probe: "heap", usage: process.memoryUsage(), invocations });
  }
  // Diagnostics: a heap snapshot written by this sandbox's own isolate (Worker.getHeapSnapshot
  // streamed it to the parent and ended the process on large heaps).
  if (message.probe === "snapshot") {
    collectGarbage();
    return parentPort.postMessage({ probe: "snapshot", file: v8.writeHeapSnapshot(message.file) });
  }
  invocations += 1;
  try {
    const handler = await loadHandler();
    if (handler[STREAMING] === "response") return await invokeStreaming(handler, message);
    const result = await handler(JSON.parse(message.payload), contextOf(message));
    parentPort.postMessage({ requestId: message.requestId, ok: true, payload: result === undefined ? "null" : JSON.stringify(result), missingEnvReads: [...missingEnvReads] });
  } catch (error) {
    parentPort.postMessage({ requestId: message.requestId, ok: false, error: errorPayload(error), missingEnvReads: [...missingEnvReads] });
  }
});
