/** What every handler may use: the platform, and a signal that fires when the server begins to shut down. */
import type { Observable } from 'rxjs';
import type { Platform } from '../platform.js';
import type { SseClients } from './sse-clients.js';
import type { LoginCodes } from './login-codes.js';

export interface ServerContext {
  platform: Platform;
  shutdown$: Observable<void>;
  /** The event streams open now. */
  sse: SseClients;
  /** The token every request must carry (none: the open loopback API), and the dashboard's one-time link codes. */
  access: { token?: string; codes: LoginCodes };
}
