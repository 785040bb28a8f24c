/** What every handler may use: the platform, and a signal that fires when the server begins to shut down. */
import type { Observable } from 'rxjs';
import type { Platform } from '../platform.js';
import type { SseClients } from './sse-clients.js';

export interface ServerContext {
  platform: Platform;
  shutdown$: Observable<void>;
  /** The event streams open now. */
  sse: SseClients;
}
