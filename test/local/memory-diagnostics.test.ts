import { describe, expect, it } from "vitest";
import { memoryDiagnostics, memoryDiagnosticsEnabled } from "../../infra/local/memory-diagnostics";

describe("memory diagnostics", () => {
  it("are on only with LOCAL_MEMORY_DIAGNOSTICS=1", () => {
    // Assess
    expect(memoryDiagnosticsEnabled({})).toBe(false);
    expect(memoryDiagnosticsEnabled({ LOCAL_MEMORY_DIAGNOSTICS: "0" })).toBe(false);
    expect(memoryDiagnosticsEnabled({ LOCAL_MEMORY_DIAGNOSTICS: "1" })).toBe(true);
  });

  it("count the sandboxes alive and busy over every function's pool, next to the main heap", () => {
    // Prepare
    const pools = [
      { sandboxCount: () => 2, busyCount: () => 1 },
      { sandboxCount: () => 0, busyCount: () => 0 },
      { sandboxCount: () => 3, busyCount: () => 0 },
    ];

    // Act
    const report = memoryDiagnostics(pools);

    // Assess
    expect(report.sandboxes).toBe(5);
    expect(report.busySandboxes).toBe(1);
    expect(report.heapUsedMb).toBeGreaterThan(0);
    expect(report.rssMb).toBeGreaterThanOrEqual(report.heapUsedMb);
  });
});
