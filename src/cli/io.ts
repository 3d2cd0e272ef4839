/** What a command may touch of the outside world; tests pass their own to capture output. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /** Folder that relative paths are read from and printed against. */
  cwd: string;
}

export function processIo(): CliIo {
  return {
    out: (text) => void process.stdout.write(text),
    err: (text) => void process.stderr.write(text),
    cwd: process.cwd(),
  };
}

/** Exit codes of the `forge` command. */
export const CLI_EXIT = {
  OK: 0,
  /** The input was read and is wrong (a plan with problems). */
  PROBLEMS: 1,
  /** The command could not run: bad usage, a missing folder or file. */
  USAGE: 2,
  /**
   * Some of the checks could not run, and none of those that ran failed (`forge doctor`: no
   * credentials, credentials refused, GitHub out of reach, no such repository).
   */
  NOT_CHECKED: 3,
  /** A bug in Forge. */
  INTERNAL: 70,
} as const;

/** An error the user can fix, shown as one line without a stack trace. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = CLI_EXIT.USAGE,
  ) {
    super(message);
    this.name = "CliError";
  }
}

/** Error codes of the file system that are the user's to fix (a folder that cannot be written, a path through a file…). */
const FILE_SYSTEM_CODES = new Set([
  "EACCES",
  "EPERM",
  "EROFS",
  "ENOSPC",
  "EDQUOT",
  "ENOTDIR",
  "EISDIR",
  "EEXIST",
  "ENOENT",
  "ENAMETOOLONG",
  "ELOOP",
]);

/** A file-system error the user can fix, or undefined for anything else. */
export function isFileSystemError(e: unknown): e is NodeJS.ErrnoException {
  return e instanceof Error && FILE_SYSTEM_CODES.has((e as NodeJS.ErrnoException).code ?? "");
}

/**
 * A file-system error in words: `permission denied (EACCES)` and, when the error names a path, the
 * path — Node's message `EACCES: permission denied, mkdir '/x'` reordered for one line.
 */
export function fileSystemProblem(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  const what = /^[A-Z]+: ([^,]+)/.exec(err.message ?? "")?.[1] ?? err.message ?? String(e);
  const words: Record<string, string> = { ENOTDIR: "a part of the path is a file, not a folder" };
  return `${err.path ? `${err.path}: ` : ""}${words[err.code ?? ""] ?? what}${err.code ? ` (${err.code})` : ""}`;
}
