/**
 * aws-local-stepfunctions 3.x targets Node 22 and calls `Promise.withResolvers`
 * (ES2024) when a Task state runs. Node 20 lacks it, so we install a
 * spec-equivalent version, and only when it is missing: a runtime that has
 * the native one keeps it.
 */
interface PromiseWithResolvers<T> {
  promise: Promise<T>;
  resolve: (value: T | PromiseLike<T>) => void;
  reject: (reason?: unknown) => void;
}

type PromiseConstructorWithResolvers = PromiseConstructor & {
  withResolvers?: <T>() => PromiseWithResolvers<T>;
};

function withResolvers<T>(): PromiseWithResolvers<T> {
  let resolve!: PromiseWithResolvers<T>["resolve"];
  let reject!: PromiseWithResolvers<T>["reject"];
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

export function installPromiseWithResolvers(): void {
  const ctor = Promise as PromiseConstructorWithResolvers;
  if (typeof ctor.withResolvers === "function") return;
  Object.defineProperty(Promise, "withResolvers", {
    value: withResolvers,
    writable: true,
    configurable: true,
    enumerable: false,
  });
}

installPromiseWithResolvers();
