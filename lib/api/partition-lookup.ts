/**
 * `POST /api/partitions/lookup`: many partitions read in one request, by ref. A page that shows hundreds of
 * partitions (the dashboard's graph) read them one request each, after every batch of events.
 */
import type { PartitionView } from './views.js';
import { MAX_PAGE } from './page.js';

/** Most refs one lookup takes: a page's worth, so one answer costs no more than a page of `/api/partitions`. */
export const PARTITION_LOOKUP_MAX = MAX_PAGE;

/** A body that would do: the OpenAPI document shows it, and a refusal says it. */
export const PARTITION_LOOKUP_EXAMPLE = '{"refs": ["daily/revenue/date=2026-01-05", "daily/revenue/date=2026-01-06"]}';

export interface PartitionLookupBody {
  refs: string[];
}

export interface PartitionLookupReply {
  /** The partitions of the refs that have been seen, in the order asked (a ref asked twice answered once). */
  data: PartitionView[];
  /** The refs asked for that no partition has been seen for (nothing has built them, nor begun to). */
  unknown: string[];
}
