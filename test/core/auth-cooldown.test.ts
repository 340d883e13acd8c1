import { describe, expect, it } from "vitest";
import { chooseProfile, COOLDOWN, isCoolingDown, recordProfileFailure, type ProfileHealth } from "../../shared/core/auth-cooldown";

const MIN = 60_000;
const HOUR = 60 * MIN;
const T0 = 1_000_000_000;

function failTimes(reason: Parameters<typeof recordProfileFailure>[1], times: number, gapMs = 1000, model = "m") {
  let health: ProfileHealth | undefined;
  let now = T0;
  for (let i = 0; i < times; i += 1) {
    health = recordProfileFailure(health, reason, model, now);
    now += gapMs;
  }
  return { health: health!, at: now - gapMs };
}

describe("profile cooldowns (reference §G.74)", () => {
  it("steps 30 s -> 1 min -> 5 min by recent errors, capped at 5 min", () => {
    const cooldowns = [1, 2, 3, 4].map((n) => {
      const { health, at } = failTimes("overloaded", n);
      return health.cooldownUntil! - at;
    });
    expect(cooldowns).toEqual([30_000, MIN, 5 * MIN, 5 * MIN]);
  });

  it("resets the error count after 24 h without failures", () => {
    const { health, at } = failTimes("timeout", 3);
    const later = recordProfileFailure(health, "timeout", "m", at + COOLDOWN.failureWindowMs + 1);
    expect(later.errorCount).toBe(1);
    expect(later.cooldownUntil! - (at + COOLDOWN.failureWindowMs + 1)).toBe(30_000);
  });

  it("disables billing failures 5 h, doubling to a 24 h cap", () => {
    const spans = [1, 2, 3, 4].map((n) => {
      const { health, at } = failTimes("billing", n);
      expect(health.disabledReason).toBe("billing");
      return (health.disabledUntil! - at) / HOUR;
    });
    expect(spans).toEqual([5, 10, 20, 24]);
  });

  it("disables permanent auth failures 10 min, doubling to a 60 min cap", () => {
    const spans = [1, 2, 3, 4].map((n) => {
      const { health, at } = failTimes("auth_permanent", n);
      return (health.disabledUntil! - at) / MIN;
    });
    expect(spans).toEqual([10, 20, 40, 60]);
  });

  it("scopes rate-limit cooldowns to the model; other reasons cool the whole profile", () => {
    const limited = recordProfileFailure(undefined, "rate_limit", "gpt-a", T0);
    expect(isCoolingDown(limited, "gpt-a", T0 + 1)).toBe(true);
    expect(isCoolingDown(limited, "gpt-b", T0 + 1)).toBe(false);
    const auth = recordProfileFailure(limited, "auth", "gpt-a", T0 + 2);
    expect(isCoolingDown(auth, "gpt-b", T0 + 3)).toBe(true);
    expect(isCoolingDown(auth, "gpt-b", auth.cooldownUntil!)).toBe(false);
  });
});

describe("chooseProfile", () => {
  const order = ["a", "b", "c"];
  const cooling = (id: string, until: number): [string, ProfileHealth] => [id, { errorCount: 1, cooldownUntil: until, billingFailures: 0, authPermanentFailures: 0 }];

  it("keeps the pinned profile, else takes the first untried one that is not cooling down", () => {
    const health = new Map([cooling("a", T0 + MIN)]);
    expect(chooseProfile(order, health, { pinned: "c", tried: [], model: "m", now: T0 })).toEqual({ profileId: "c", coolingDown: false });
    expect(chooseProfile(order, health, { tried: [], model: "m", now: T0 })).toEqual({ profileId: "b", coolingDown: false });
    expect(chooseProfile(order, health, { tried: ["b"], model: "m", now: T0 })).toEqual({ profileId: "c", coolingDown: false });
  });

  it("skips a profile that cools down because of another run", () => {
    const health = new Map([cooling("a", T0 + MIN), cooling("b", T0 + MIN)]);
    expect(chooseProfile(order, health, { tried: [], model: "m", now: T0 })?.profileId).toBe("c");
  });

  it("never offers a key that failed authentication in this run while another is left, even one cooling down longer", () => {
    // key a: 401 on the primary; key b: 503 on the primary (both cool down); the fallback model must get b.
    const health = new Map([cooling("a", T0 + MIN), cooling("b", T0 + 2 * MIN)]);
    expect(chooseProfile(["a", "b"], health, { tried: [], failed: ["a"], model: "fallback", now: T0 })).toEqual({ profileId: "b", coolingDown: true });
    expect(chooseProfile(["a", "b"], new Map(), { tried: [], failed: ["a"], model: "fallback", now: T0 })).toEqual({ profileId: "b", coolingDown: false });
    // Only failed keys left: the loop still gets one (it decides), never nothing.
    expect(chooseProfile(["a"], new Map(), { tried: [], failed: ["a"], model: "fallback", now: T0 })).toEqual({ profileId: "a", coolingDown: false });
  });

  it("when every candidate cools down, says so and offers the one that recovers first", () => {
    const health = new Map([cooling("a", T0 + 3 * MIN), cooling("b", T0 + MIN), cooling("c", T0 + 2 * MIN)]);
    expect(chooseProfile(order, health, { tried: [], model: "m", now: T0 })).toEqual({ profileId: "b", coolingDown: true });
  });
});
