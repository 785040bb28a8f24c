/**
 * platform.json gone from a workspace with a history: the daemon refuses to start on it (started on no jobs, its
 * active wants would fail), and `platform doctor` says the same, in the same words, with the same advice: put it back.
 * Writing a new one (`platform init`) is advice only for a workspace with no history.
 */

/** What to do: put the file back; a new starter graph would not hold the jobs the log's wants were made for. */
export const RESTORE_GRAPH_FILE = 'Put platform.json back (from version control, or a backup); a graph with no jobs is {"jobs": []}.';

/** Why a start is refused: `file` is missing and the log holds `events` events. */
export function graphFileMissingWithHistory(file: string, events: number): string {
  return `${file} is missing, and this workspace's event log holds ${events} events of the jobs it defined: started on no jobs, its active wants would fail.`;
}
