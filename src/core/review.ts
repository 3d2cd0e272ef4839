import picomatch from "picomatch";

/** What the executor reads of a walkthrough when reviewing it (see docs/executor.md#review). */
export interface ReviewInput {
  risks: readonly string[];
  followups: readonly string[];
  confidence: number;
  filesChanged: readonly string[];
}

/** A task in flight: the files its finished attempt changed, and the scope its plan declares. */
export interface InFlight {
  id: string;
  files: readonly string[];
  paths: readonly string[];
}

export interface ReviewOptions {
  threshold: number;
  keywords: readonly string[];
  spawnOpenEnded: boolean;
}

export interface Conflict {
  riskDescription: string;
  relatedTasks: string[];
  files: string[];
}

export interface ReviewResult {
  conflicts: Conflict[];
  lowConfidence: boolean;
  followups: { text: string; spawn: boolean }[];
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** A follow-up is bug-like when it names a keyword as a word (fix, fixes, fixed, fixing — not "fixture"). */
export function keywordMatcher(keywords: readonly string[]): (text: string) => boolean {
  if (keywords.length === 0) return () => false;
  const re = new RegExp(`\\b(?:${keywords.map(escape).join("|")})(?:s|es|ed|ing)?\\b`, "i");
  return (text) => re.test(text);
}

const matcherCache = new Map<string, (path: string) => boolean>();
function globMatcher(glob: string): (path: string) => boolean {
  let m = matcherCache.get(glob);
  if (!m) {
    m = picomatch(glob, { dot: true });
    matcherCache.set(glob, m);
  }
  return m;
}

/** The literal directory prefix of a glob (`src/api/**` → `src/api`), used to spot it in prose. */
function globStem(glob: string): string {
  const cut = glob.search(/[*?[{]/);
  const stem = (cut < 0 ? glob : glob.slice(0, cut)).replace(/\/+$/, "");
  return stem;
}

function basename(path: string): string {
  const slash = path.lastIndexOf("/");
  return slash < 0 ? path : path.slice(slash + 1);
}

const wordCache = new Map<string, RegExp>();
/** `name` as a whole word of `text` (compiled once per name: reviews run on every completed task). */
function hasWord(text: string, name: string): boolean {
  if (!text.includes(name)) return false;
  let re = wordCache.get(name);
  if (!re) {
    re = new RegExp(`(^|[^A-Za-z0-9_])${escape(name)}($|[^A-Za-z0-9_])`);
    if (wordCache.size > 10_000) wordCache.clear();
    wordCache.set(name, re);
  }
  return re.test(text);
}

/** Names by which prose can refer to a file: its path, its file name, and its module name (file name without extension). */
function mentions(text: string, path: string): boolean {
  if (text.includes(path)) return true;
  const file = basename(path);
  if (hasWord(text, file)) return true;
  const module = file.replace(/\.[^.]+$/, "");
  return module.length >= 3 && module !== file && hasWord(text, module);
}

function touches(other: InFlight, path: string): boolean {
  return other.files.includes(path) || other.paths.some((g) => globMatcher(g)(path));
}

/**
 * Review a walkthrough: risks that name files another in-flight task touches, changed files that
 * overlap another in-flight task's files or declared paths, low confidence, and which follow-ups
 * spawn an agent. Pure; the executor turns the result into events and effects.
 */
export function reviewWalkthrough(w: ReviewInput, inFlight: readonly InFlight[], opts: ReviewOptions): ReviewResult {
  const conflicts: Conflict[] = [];

  const overlapTasks: string[] = [];
  const overlapFiles = new Set<string>();
  for (const other of inFlight) {
    const shared = w.filesChanged.filter((f) => touches(other, f));
    if (shared.length > 0) {
      overlapTasks.push(other.id);
      for (const f of shared) overlapFiles.add(f);
    }
  }
  if (overlapTasks.length > 0) {
    conflicts.push({
      riskDescription: "changed files overlap with tasks in flight",
      relatedTasks: overlapTasks,
      files: [...overlapFiles].sort(),
    });
  }

  for (const risk of w.risks) {
    const related: string[] = [];
    const files = new Set<string>();
    for (const other of inFlight) {
      let hit = false;
      for (const f of other.files) {
        if (mentions(risk, f)) {
          files.add(f);
          hit = true;
        }
      }
      for (const g of other.paths) {
        const stem = globStem(g);
        if (stem.length >= 3 && risk.includes(stem)) {
          files.add(g);
          hit = true;
        }
      }
      if (hit) related.push(other.id);
    }
    if (related.length > 0) conflicts.push({ riskDescription: risk, relatedTasks: related, files: [...files].sort() });
  }

  const bugLike = keywordMatcher(opts.keywords);
  return {
    conflicts,
    lowConfidence: w.confidence < opts.threshold,
    followups: w.followups.map((text) => ({ text, spawn: bugLike(text) || opts.spawnOpenEnded })),
  };
}
