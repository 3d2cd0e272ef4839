/**
 * A git command that failed, wherever Forge runs git: the local GitHub's repositories, the agent
 * layer's branches, the action's checkout. Each part words the message; the fields are the same.
 */
export class GitError extends Error {
  constructor(
    message: string,
    /** The arguments git was called with (`git <args>`). */
    readonly args: readonly string[],
    /** git's exit code; null when it was killed by a signal. */
    readonly code: number | null,
    /** What git wrote on stderr (masked where the caller holds secrets). */
    readonly stderr: string,
  ) {
    super(message);
    this.name = "GitError";
  }
}
