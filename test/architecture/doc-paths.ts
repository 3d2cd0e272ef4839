/**
 * The paths a Markdown document of the repository cites, and those that do not exist. A path is
 * cited in code (`src/core/layout.ts`), as a link's target (resolved from the document's folder),
 * or in a layout block (a fenced block whose lines begin with a folder and describe what it holds:
 * `action/  … src/task/, …` — names there are read from that folder). In code only a path that
 * begins with a top-level entry of the repository counts (`index.ts` alone names a file of whatever
 * folder the sentence is about); `<placeholders>`, addresses and `dist/` (built, not committed) do
 * not. A glob (`schemas/*.schema.json`) must match something.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import picomatch from "picomatch";

const ROOT = path.resolve(import.meta.dirname, "..", "..");
const SKIP = new Set(["node_modules", ".git", "dist", "coverage"]);

/** Every file and folder of the repository (not node_modules, not built output), as `a/b` paths. */
function entries(): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const name of readdirSync(path.join(ROOT, rel))) {
      if (SKIP.has(name) && rel === "") continue;
      if (name === "node_modules") continue;
      const p = rel ? `${rel}/${name}` : name;
      out.push(p);
      if (statSync(path.join(ROOT, p)).isDirectory() && !(rel === "action" && name === "dist")) walk(p);
    }
  };
  walk("");
  return out;
}

let listed: string[] | undefined;

/** Whether a repository path (relative to the root, `/`-separated, maybe a glob) names something. */
export function exists(p: string): boolean {
  const clean = path.posix.normalize(p).replace(/\/$/, "");
  if (clean.startsWith("..")) return false;
  if (!/[*?{]/.test(clean)) return existsSync(path.join(ROOT, clean));
  const match = picomatch(clean, { dot: true });
  return (listed ??= entries()).some((e) => match(e));
}

const TOP = new Set(readdirSync(ROOT).filter((n) => !SKIP.has(n)));
/** Files of the repository a user installs Forge in, which the documents name too. */
const USERS_FILES = new Set([".github/forge.yml", ".github/workflows/forge-agent.yml", ".github/workflows/forge-tick.yml"]);
const PATHLIKE = /^(\.\.?\/)*\.?[\w@-][\w.@*{},-]*(\/[\w.@*{},-]+)*\/?$/;
const FILEISH = /\.(md|ts|js|mjs|json|ya?ml|sh)$/;

/** The token of a code span or target that may be a path: its first word, without anchor or line. */
function pathOf(raw: string): string | undefined {
  const p = raw
    .trim()
    .split(/\s+/)[0]!
    .replace(/#.*$/, "")
    .replace(/:\d+$/, "")
    .replace(/[,;:.]+$/, "");
  if (!p || /[<>$]|:\/\//.test(p) || !PATHLIKE.test(p)) return undefined;
  return p;
}

/** Paths a document cites that do not exist, each as `line N: path`. */
export function missingPaths(doc: string): string[] {
  const text = readFileSync(path.join(ROOT, doc), "utf8");
  const dir = path.posix.dirname(doc);
  const missing: string[] = [];
  const lines = text.split("\n");
  let fence: string | undefined;
  let rowFolders: string[] = [];
  lines.forEach((line, i) => {
    const at = (p: string) => missing.push(`line ${i + 1}: ${p}`);
    const f = /^(`{3,})(\S*)\s*$/.exec(line);
    if (f) {
      fence = fence === undefined ? f[2]! : undefined;
      rowFolders = [];
      return;
    }
    if (fence !== undefined) {
      // A layout block: `folder/  what it holds`, continued on indented lines.
      if (fence !== "") return;
      const row = /^(\S.*?)\s{2,}(.*)$/.exec(line);
      const cont = /^\s{10,}(\S.*)$/.exec(line);
      if (!row && !cont) return;
      let described = cont?.[1] ?? "";
      if (row) {
        const heads = row[1]!.split(/,\s*/).map((h) => h.trim());
        if (!heads.every((h) => PATHLIKE.test(h) && TOP.has(h.split("/")[0]!))) return void (rowFolders = []);
        for (const h of heads) if (!exists(h)) at(h);
        rowFolders = heads.filter((h) => h.endsWith("/"));
        described = row[2]!;
      }
      if (!rowFolders.length) return;
      for (const word of described.split(/[\s,;()]+/)) {
        const p = word.replace(/[.:]+$/, "");
        if (!PATHLIKE.test(p) || !(p.includes("/") || FILEISH.test(p)) || p.startsWith("dist/")) continue;
        if (!rowFolders.some((r) => exists(`${r}${p}`)) && !exists(p)) at(`${rowFolders[0]}${p}`);
      }
      return;
    }
    for (const m of line.matchAll(/`([^`]+)`/g)) {
      const p = pathOf(m[1]!);
      if (!p || !TOP.has(p.split("/")[0]!) || p.startsWith("dist/") || USERS_FILES.has(p)) continue;
      if (!exists(p)) at(p);
    }
    for (const m of line.matchAll(/\]\(([^)\s]+)\)/g)) {
      const p = pathOf(m[1]!);
      if (!p || /^[a-z]+:/i.test(m[1]!) || m[1]!.startsWith("#")) continue;
      if (!exists(path.posix.join(dir, p))) at(p);
    }
  });
  return missing;
}
