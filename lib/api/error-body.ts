/** How the server says no: the JSON API's error body, and the Connect protocol's for PlatformService. */

/** Every JSON API error (and an SSE `error` message's data). `want_id` names the want the error is about. */
export interface ErrorBody {
  error: string;
  want_id?: string;
  /** On a 410 for events a compaction removed: the first event still in the log. */
  first_event_id?: number;
  /** On a 503 while the server stops: the request was not carried out, and may be run again (against a new server). */
  stopping?: true;
}

/** Connect error codes, as written on the wire. */
export type ConnectCode =
  | 'canceled'
  | 'unknown'
  | 'invalid_argument'
  | 'deadline_exceeded'
  | 'not_found'
  | 'already_exists'
  | 'permission_denied'
  | 'resource_exhausted'
  | 'failed_precondition'
  | 'aborted'
  | 'out_of_range'
  | 'unimplemented'
  | 'internal'
  | 'unavailable'
  | 'data_loss'
  | 'unauthenticated';

/** A PlatformService error (Connect protocol, whatever the request's codec). */
export interface ConnectErrorBody {
  code: ConnectCode;
  message: string;
}
