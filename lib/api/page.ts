/** Lists come in pages: what a list request asks for and what it gets back. */
import type { EventView } from './views.js';

/** The most a list page holds (`?limit=`, `--limit`). */
export const MAX_PAGE = 1000;

/** The most events one `GET /api/events` reads (`?limit=`, `platform events --limit`). */
export const MAX_EVENTS_PER_READ = 10_000;

/** `?order=`: `desc` lists newest first. */
export type PageOrder = 'asc' | 'desc';

/** The query of a list request (`?offset=&limit=&order=`). */
export interface PageParams {
  offset?: number;
  limit?: number;
  /** `desc` lists newest first. */
  order?: PageOrder;
}

export interface Page<T> {
  data: T[];
  total: number;
  offset: number;
  limit: number;
}

/** `GET /api/events`: events by id after `offset`, with the latest id instead of a total. */
export interface EventPage {
  data: EventView[];
  latest_id: number;
  /** The first event still in the log: 1 unless `retention.events_keep` compacted older ones away. */
  first_id: number;
  offset: number;
  limit: number;
}
