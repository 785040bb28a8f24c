/**
 * A backfill's policy and its want's rebuild policy: one choice under two names (the backfill's, and the want's the
 * planner acts on). The want page (CLI and dashboard) says the backfill's name beside the want's.
 */
import type { RebuildPolicy } from '../events/build-event.js';
import type { BackfillPolicy } from './backfills.js';

/** What a backfill's want rebuilds, by its policy (what command-decisions.ts records). */
export const BACKFILL_REBUILD: Readonly<Record<BackfillPolicy, RebuildPolicy>> = { missing: 'absent', failed: 'missing', all: 'all' };

/** The other way: a backfill's policy as its want's rebuild says it (`stale` is no backfill's: read as `failed`). */
export const BACKFILL_POLICY_OF: Readonly<Record<RebuildPolicy, BackfillPolicy>> = { absent: 'missing', missing: 'failed', all: 'all', stale: 'failed' };
