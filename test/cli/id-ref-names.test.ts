/**
 * `forge validate`'s id rule agrees with git: an id Forge accepts is a valid component of every
 * branch Forge makes from it (`git check-ref-format`, the same check GitHub's "… is not a valid ref
 * name." answers), and an id of the allowed characters that git refuses is refused — over random
 * ids made of the characters ID_PATTERN allows, weighted towards the dots git cares about.
 */
import { execFileSync } from "node:child_process";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ID_PATTERN, isId } from "../../src/core/schemas/common.js";

function gitAccepts(ref: string): boolean {
  try {
    execFileSync("git", ["check-ref-format", ref], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

const idLike = fc
  .array(fc.constantFrom("a", "z", "0", "9", ".", ".", ".", "-", "_", ".lock", "lock"), { minLength: 1, maxLength: 8 })
  .map((parts) => parts.join(""))
  .filter((id) => ID_PATTERN.test(id));

describe("ids and git branch names", () => {
  it("isId(id) exactly when git takes the id inside a task branch and at the end of a branch name", () => {
    fc.assert(
      fc.property(idLike, (id) => {
        const git = gitAccepts(`refs/heads/forge/run-1/${id}/1`) && gitAccepts(`refs/heads/forge/${id}`);
        expect(isId(id), id).toBe(git);
      }),
      { numRuns: 300, seed: 25 },
    );
  });

  it("the names the issue found: refused by both", () => {
    for (const id of ["fix..up", "cache.lock", "v1."]) {
      expect(isId(id)).toBe(false);
      expect(gitAccepts(`refs/heads/forge/run-1/${id}/1`) && gitAccepts(`refs/heads/forge/${id}`)).toBe(false);
    }
    expect(isId("v1.2-rc_3")).toBe(true);
  });
});
