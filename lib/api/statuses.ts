/** The status values the views carry and the lists filter by: build-state's own, as the wire spells them. */
export type { JobRunStatus, PartitionStatus, WantStatus } from '../state/build-state.js';
