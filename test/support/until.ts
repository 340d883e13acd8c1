/**
 * Polls `read` until it yields a value: how tests wait for a condition on the
 * stack (a record's status, a heartbeat) without betting on how long it takes.
 * The timeout only bounds a test that is broken, so it is generous.
 */
export async function until<T>(read: () => Promise<T | undefined>, what: string, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
