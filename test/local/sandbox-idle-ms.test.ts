import { describe, expect, it } from "vitest";
import { SANDBOX_IDLE_MS, sandboxIdleMs } from "../../infra/local/lambda/pool";

describe("sandboxIdleMs", () => {
  it("is the 60 s default when LOCAL_SANDBOX_IDLE_MS is unset or blank", () => {
    // Assess
    expect(sandboxIdleMs({})).toBe(SANDBOX_IDLE_MS);
    expect(SANDBOX_IDLE_MS).toBe(60_000);
    expect(sandboxIdleMs({ LOCAL_SANDBOX_IDLE_MS: "  " })).toBe(60_000);
  });

  it("takes a positive whole number of milliseconds from LOCAL_SANDBOX_IDLE_MS", () => {
    // Assess
    expect(sandboxIdleMs({ LOCAL_SANDBOX_IDLE_MS: "2000" })).toBe(2_000);
    expect(sandboxIdleMs({ LOCAL_SANDBOX_IDLE_MS: "1" })).toBe(1);
  });

  it("refuses a value that is not a positive whole number instead of guessing", () => {
    // Assess
    for (const bad of ["0", "-5", "1.5", "2s", "abc"]) {
      expect(() => sandboxIdleMs({ LOCAL_SANDBOX_IDLE_MS: bad })).toThrow(/LOCAL_SANDBOX_IDLE_MS/);
    }
  });
});
