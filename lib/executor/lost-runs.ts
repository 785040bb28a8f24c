/**
 * The reason recorded for a run the log shows running that no process runs any more and whose end nobody recorded
 * (its daemon and its supervisor are gone): it is canceled, so active wants rebuild it without spending the
 * job's retries on the machine's fault.
 */
export const LOST_RUN_REASON = 'lost: nothing ran it any more and nothing recorded how it ended';
