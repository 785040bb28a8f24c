/** `too_large`: a read of the graph went over its budget (graph-budget.ts). */
export type GraphErrorCode = 'invalid_graph' | 'unknown_ref' | 'ambiguous_ref' | 'config_failed' | 'cycle' | 'too_large';

export interface GraphErrorDetails {
  /** The partition ref the error is about, when there is one. */
  ref?: string;
  /** The job label(s) the error is about, when known. */
  jobs?: string[];
  /** For `cycle`: the refs around the cycle, first == last. */
  cycle?: string[];
  /** For `config_failed`: the program ran out of time (running it again on part of the refs would not help). */
  timedOut?: boolean;
}

/**
 * Any problem with the job graph: an invalid `platform.json`, a ref no job (or more than one job) produces, a
 * failing config program, or a dependency cycle. The message is written for a person: what happened, where, and
 * what to do about it.
 */
export class GraphError extends Error {
  override readonly name = 'GraphError';
  readonly code: GraphErrorCode;
  readonly ref?: string;
  readonly jobs?: string[];
  readonly cycle?: string[];
  readonly timedOut?: boolean;

  constructor(code: GraphErrorCode, message: string, details: GraphErrorDetails = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    if (details.ref !== undefined) this.ref = details.ref;
    if (details.jobs !== undefined) this.jobs = details.jobs;
    if (details.cycle !== undefined) this.cycle = details.cycle;
    if (details.timedOut !== undefined) this.timedOut = details.timedOut;
  }
}

export function isGraphError(err: unknown): err is GraphError {
  return err instanceof GraphError;
}
