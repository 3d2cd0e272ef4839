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
