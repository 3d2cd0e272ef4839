/** The repository a clone is of, as its `origin` remote names it: what `forge doctor` checks by default. */
import { execFileSync } from "node:child_process";

/** owner/name of the `origin` remote of the repository at `dir`, if it has one on a GitHub-like host. */
export function originRepo(dir: string): string | undefined {
  try {
    const url = execFileSync("git", ["-C", dir, "remote", "get-url", "origin"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
    return /[:/]([^/:]+\/[^/]+?)(?:\.git)?\/?$/.exec(url)?.[1];
  } catch {
    return undefined;
  }
}
