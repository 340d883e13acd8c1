/** The short soak (CI): runs over sessions with scripted failures; 0 lost, 0 answered twice, 0 stuck lanes. */
import { describe, expect, it } from "vitest";
import { runSoak } from "../../bench/soak";

describe("soak (short)", () => {
  it("loses nothing, answers nothing twice, leaves no lane busy", async () => {
    const report = await runSoak({ runs: 40, sessions: 8 });
    expect(report).toMatchObject({ runs: 40, lost: 0, duplicated: 0, stuckLanes: 0 });
  }, 900_000);
});
