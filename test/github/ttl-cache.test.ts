import { describe, expect, it } from "vitest";
import { cachedBranchRules, cachedRulesetName, rememberLinear } from "../../src/github/merge-rules.js";
import { requiredChecks } from "../../src/github/required-checks.js";
import { ttlCache } from "../../src/github/ttl-cache.js";

describe("a repository's settings kept for a while (ttlCache)", () => {
  it("reads once per TTL for each owner and key, and an owner's values are its own", async () => {
    const cache = ttlCache<string, number>();
    const a = {};
    const b = {};
    let reads = 0;
    const read = async () => ++reads;
    expect(await cache.get(a, "main", 0, 100, read)).toBe(1);
    expect(await cache.get(a, "main", 99, 100, read)).toBe(1);
    expect(await cache.get(b, "main", 99, 100, read)).toBe(2);
    expect(await cache.get(a, "dev", 99, 100, read)).toBe(3);
    expect(await cache.get(a, "main", 100, 100, read)).toBe(4);
    cache.set(a, "main", 42, 150);
    expect(cache.peek(a, "main")).toBe(42);
    expect(await cache.get(a, "main", 249, 100, read)).toBe(42);
  });

  it("keeps nothing of a failed read: the error reaches the caller and the next call reads again", async () => {
    const cache = ttlCache<string, string>();
    const owner = {};
    await expect(cache.get(owner, "k", 0, 100, () => Promise.reject(new Error("503")))).rejects.toThrow("503");
    expect(cache.peek(owner, "k")).toBeUndefined();
    expect(await cache.get(owner, "k", 1, 100, async () => "read")).toBe("read");
  });
});

describe("each cache's rule for a failed read", () => {
  it("required checks: the config's alone, not kept — the next call reads the rules again", async () => {
    const owner = {};
    let calls = 0;
    const flaky = async () => {
      calls++;
      if (calls === 1) throw new Error("502");
      return ["ci/build"];
    };
    expect(await requiredChecks(owner, "main", ["test"], 0, 1000, flaky)).toEqual({ all: ["test"], configured: ["test"] });
    expect(await requiredChecks(owner, "main", ["test"], 1, 1000, flaky)).toEqual({ all: ["test", "ci/build"], configured: ["test"] });
    expect(calls).toBe(2);
  });

  it("branch rules: kept as no rules and a merge commit until the TTL runs out; a linear refusal turns it to squash", async () => {
    const owner = {};
    let calls = 0;
    const failing = async () => {
      calls++;
      throw new Error("500");
    };
    expect(await cachedBranchRules(owner, "main", 0, 1000, failing)).toEqual({ method: "merge", rules: [] });
    expect(await cachedBranchRules(owner, "main", 10, 1000, failing)).toEqual({ method: "merge", rules: [] });
    expect(calls).toBe(1);
    rememberLinear(owner, "main", 20);
    expect((await cachedBranchRules(owner, "main", 30, 1000, failing)).method).toBe("squash");
    const linear = async () => [{ type: "required_linear_history" }];
    expect((await cachedBranchRules(owner, "main", 1020, 1000, linear)).method).toBe("squash");
    expect((await cachedBranchRules(owner, "dev", 1020, 1000, async () => [])).method).toBe("merge");
    // A port that cannot read rules at all (its read throws before any promise) counts as a failed read.
    const noReader = (() => {
      throw new TypeError("port.branchRules is not a function");
    }) as () => Promise<[]>;
    expect(await cachedBranchRules({}, "main", 0, 1000, noReader)).toEqual({ method: "merge", rules: [] });
  });

  it("ruleset names: a failed read throws and is not kept", async () => {
    const owner = {};
    await expect(cachedRulesetName(owner, 7, 0, 1000, () => Promise.reject(new Error("404")))).rejects.toThrow("404");
    expect(await cachedRulesetName(owner, 7, 1, 1000, async () => "main protection")).toBe("main protection");
    expect(await cachedRulesetName(owner, 7, 2, 1000, async () => "renamed")).toBe("main protection");
  });
});
