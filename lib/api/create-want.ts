/** `POST /api/wants`: the body a client sends and the server's reply. */
import type { RebuildPolicy } from '../events/build-event.js';
import type { WantView } from './views.js';

export interface CreateWantBody {
  partitions: string[];
  comment?: string;
  /** ISO 8601 or epoch milliseconds. */
  data_timestamp?: string | number;
  ttl_seconds?: number;
  sla_seconds?: number;
  /** What to rebuild: 'missing' (default), 'stale' (also stale or tainted inputs), 'all'. */
  rebuild?: RebuildPolicy;
  /** Whole number, default 0; higher first when runs wait for capacity. */
  priority?: number;
}

export interface CreateWantReply {
  want_id: string;
  want: WantView;
}
