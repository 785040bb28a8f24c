/** Errors a handler throws on purpose; the error middleware turns them into `{"error", "want_id"?}`. */
import type { ErrorBody } from '../api/error-body.js';

export class HttpError extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 405 | 409 | 410 | 413 | 415 | 503 | 500,
    message: string,
    readonly wantId?: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export function errorBody(message: string, wantId?: string): ErrorBody {
  return wantId === undefined ? { error: message } : { error: message, want_id: wantId };
}
