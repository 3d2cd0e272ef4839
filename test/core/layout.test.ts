import { describe, expect, it } from "vitest";
import {
  branchName,
  branchParser,
  captainBranch,
  captainId,
  DEFAULT_BRANCH_TEMPLATE,
  DEFAULT_INTEGRATION_BRANCH_TEMPLATE,
  followupId,
  integrationBranch,
  isFollowupId,
  isReservedBranch,
  parseCaptainBranch,
  parseCaptainId,
  parseFollowupBranch,
  parseIntegrationBranch,
  parsePlanCaptainId,
  parsePlanPath,
  parseStateBranch,
  planCaptainBranch,
  planCaptainId,
  planDir,
  planRunId,
  PLAN_RUN_ID,
  RESERVED_PREFIX,
  runIdFor,
  stateBranch,
} from "../../src/core/layout.js";
import { ID_PATTERN } from "../../src/core/schemas/common.js";
import { forgeConfigSchema } from "../../src/core/schemas/config.js";

const config = forgeConfigSchema.parse({});
const RUN = runIdFor("csv-export", "0123456789abcdef0123456789abcdef01234567");

describe("the names Forge builds read back to what built them", () => {
  it("state and integration branches round-trip, and are the run's reserved branches", () => {
    expect(RUN).toBe("csv-export-0123456");
    expect(stateBranch(RUN)).toBe("forge/csv-export-0123456/_state");
    expect(parseStateBranch(stateBranch(RUN))).toBe(RUN);
    expect(integrationBranch(config, RUN)).toBe("forge/csv-export-0123456/_integration");
    expect(parseIntegrationBranch(integrationBranch(config, RUN))).toBe(RUN);
    expect(isReservedBranch(stateBranch(RUN))).toBe(true);
    expect(isReservedBranch(integrationBranch(config, RUN))).toBe(true);
    expect(isReservedBranch(branchName(config, RUN, "parse", 1))).toBe(false);
  });

  it("the config's defaults are the layout's templates", () => {
    expect(config.branch_template).toBe(DEFAULT_BRANCH_TEMPLATE);
    expect(config.integration_branch_template).toBe(DEFAULT_INTEGRATION_BRANCH_TEMPLATE);
  });

  it("task and follow-up branches round-trip through the template, the default one and a custom one", () => {
    const parse = branchParser(config);
    expect(parse(branchName(config, RUN, "parse", 3))).toEqual({ runId: RUN, taskId: "parse", attempt: 3 });
    expect(parse(branchName(config, RUN, followupId(2), 1))).toEqual({ runId: RUN, taskId: "_followup-2", attempt: 1 });
    expect(parseFollowupBranch(branchName(config, RUN, followupId(2), 1))).toEqual({ runId: RUN, taskId: "_followup-2", attempt: 1 });
    expect(parseFollowupBranch(branchName(config, RUN, "parse", 1))).toBeUndefined();
    const custom = { branch_template: "work/{taskId}-{attempt}@{runId}" };
    expect(branchParser(custom)(branchName(custom, RUN, "a.b_c", 12))).toEqual({ runId: RUN, taskId: "a.b_c", attempt: 12 });
  });

  it("Forge's own ids round-trip and are reserved; task ids are not", () => {
    expect(followupId(4)).toBe("_followup-4");
    expect(isFollowupId(followupId(4))).toBe(true);
    expect(captainId("cr-a-1")).toBe("_captain-cr-a-1");
    expect(parseCaptainId(captainId("cr-a-1"))).toBe("cr-a-1");
    expect(parseCaptainBranch(captainBranch(RUN, "cr-a-1"))).toEqual({ runId: RUN, crId: "cr-a-1" });
    expect(planRunId(7)).toBe("_plan-7");
    expect(PLAN_RUN_ID.test(planRunId(7))).toBe(true);
    expect(parsePlanCaptainId(planCaptainId(7))).toBe(7);
    expect(planCaptainBranch(7)).toBe("forge/_plan-7");
    // Forge's own ids start with the reserved prefix, which no task id may take.
    for (const id of [followupId(1), captainId("x"), planRunId(1), planCaptainId(1)]) {
      expect(id.startsWith(RESERVED_PREFIX)).toBe(true);
      expect(ID_PATTERN.test(id), id).toBe(false);
    }
    expect(ID_PATTERN.test("parse")).toBe(true);
    expect(parsePlanPath(`${planDir("csv-export")}/tasks/parse.md`)).toEqual({ planId: "csv-export", file: "tasks/parse.md" });
  });
});

describe("names the builders never build are refused", () => {
  it.each([
    "forge/a/b/_state",
    "forge/../_state",
    "forge/.hidden/_state",
    "forge//_state",
    "forge/run/_state/x",
    "refs/heads/forge/run/_state",
    "forge/run/_integration",
    "forge/run/_State",
  ])("not a state branch: %s", (name) => {
    expect(parseStateBranch(name)).toBeUndefined();
  });

  it.each(["forge/a/b/_integration", "forge/../_integration", "forge/run/_state"])("not an integration branch: %s", (name) => {
    expect(parseIntegrationBranch(name)).toBeUndefined();
  });

  it.each([
    "forge/../parse/1",
    "forge/run/Parse/1",
    "forge/run/_state/1",
    "forge/run/_captain-x/1",
    "forge/run/parse/x",
    "forge/run/parse",
    "forge/run/a/parse/1",
    "forge/run/_followup-0/1",
  ])("not a task branch: %s", (name) => {
    expect(branchParser(config)(name)).toBeUndefined();
    expect(parseFollowupBranch(name)).toBeUndefined();
  });

  it("not Forge's own ids or branches", () => {
    expect(isFollowupId("_followup-0")).toBe(false);
    expect(isFollowupId("_followup-x")).toBe(false);
    expect(parseCaptainId("captain-x")).toBeUndefined();
    expect(parseCaptainId("_captain-")).toBeUndefined();
    expect(parseCaptainId("_captain-../x")).toBeUndefined();
    expect(parseCaptainBranch("forge/run/_captain-a/b")).toBeUndefined();
    expect(parseCaptainBranch("forge/../_captain-a")).toBeUndefined();
    expect(parsePlanCaptainId("_captain-plan-0")).toBeUndefined();
    expect(parsePlanCaptainId("_captain-cr-1")).toBeUndefined();
    expect(PLAN_RUN_ID.test("_plan-x")).toBe(false);
    expect(parsePlanPath(".forge/plans/x")).toBeUndefined();
    expect(parsePlanPath(".forge/runs/x/t/1/result.json")).toBeUndefined();
  });
});
