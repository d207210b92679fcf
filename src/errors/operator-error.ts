/**
 * What a failure tells the operator: an exit code per kind of outcome (docs/command-line.md "Exit codes"), and an error whose
 * message is already the one line to print. Settings, the server process and the command line all raise these;
 * cli/failures.ts turns any other failure into such a line.
 */
export const ExitCode = {
  /** Done, or stopped cleanly by SIGTERM/SIGINT. */
  ok: 0,
  /** A failure while running that none of the codes below names. */
  failure: 1,
  /** The command line or the configuration is wrong (unknown option, bad value, weak DEMO_TOKEN, …). */
  usage: 2,
  /** The database cannot be opened or reached (missing database or folder, refused login, unreachable host). */
  database: 3,
  /** The server cannot listen (the port is in use, or needs privileges). */
  listen: 4,
  /** ingest: the file had bad lines (skipped, or with --on-error reject, nothing written). */
  badInput: 5,
  /**
   * The dictionary's change cannot be applied to the stored data (records whose values cannot take it), or the
   * database was migrated by a newer build: nothing was changed.
   */
  migrationRefused: 6,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** An error whose message is already the line to print, with the code to exit with. */
export class OperatorError extends Error {
  constructor(message: string, readonly exitCode: ExitCodeValue = ExitCode.usage) {
    super(message);
  }
}
