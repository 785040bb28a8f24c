/**
 * A refusal made before a PlatformService method runs (the token, Host and Origin guards, a body the JSON layer
 * refused) as a Connect error: a Connect client reads the message only from a `{"code", "message"}` body, and shows
 * a bare `[unauthenticated]` for the JSON API's `{"error"}`.
 */
import type { ConnectCode } from '../../api/error-body.js';
import { PLATFORM_SERVICE } from '../../proto/schema.js';
import { RpcError } from './connect-unary.js';

/** Whether a request path is one of the service's (its methods, known or not). */
export function isServicePath(path: string): boolean {
  return path.startsWith(`/${PLATFORM_SERVICE}/`);
}

/** The Connect code closest to an HTTP status the JSON API answers with. */
function codeOfStatus(status: number): ConnectCode {
  switch (status) {
    case 400:
      return 'invalid_argument';
    case 401:
      return 'unauthenticated';
    case 403:
      return 'permission_denied';
    case 404:
      return 'not_found';
    case 409:
      return 'aborted';
    case 413:
    case 429:
    case 507:
      return 'resource_exhausted';
    case 415:
      return 'unimplemented';
    case 503:
      return 'unavailable';
    default:
      return status >= 400 && status < 500 ? 'invalid_argument' : 'internal';
  }
}

/** The refusal with its HTTP status and headers kept. */
export function refusalAsRpcError(status: number, message: string, headers: Readonly<Record<string, string>> = {}): RpcError {
  return new RpcError(codeOfStatus(status), message, status, headers);
}
