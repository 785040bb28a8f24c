/**
 * What the daemon says in its log (server.log) when a schedule skips ticks or is paused or resumed: the event log
 * has it too, but whoever reads server.log to see why a tick made no want finds it there.
 */
import type { BuildEvent } from '../events/build-event.js';

const iso = (ms: number) => new Date(ms).toISOString();

/** The line for a schedule's skip, pause or resume; undefined for any other event. */
export function scheduleLogLine(e: BuildEvent): string | undefined {
  switch (e.type) {
    case 'schedule_ticks_skipped': {
      const k = e.schedule_ticks_skipped;
      const n = `${k.count_at_least ? 'at least ' : ''}${k.count} tick${k.count === 1 ? '' : 's'}`;
      const ticks = k.first_tick === k.latest_tick ? iso(k.latest_tick) : `${iso(k.first_tick)} .. ${iso(k.latest_tick)}`;
      const why =
        k.reason === 'paused'
          ? 'they fell due while it was paused'
          : "they were missed (the daemon was down or late) beyond its catchup; raise 'catchup' in platform.json to make more of them";
      return `schedule ${k.name}: skipped ${n} (${ticks}), no want made: ${why}`;
    }
    case 'schedule_paused':
      // The reason is a user's text, quoted: a newline in it must not make a line of its own in the log.
      return `schedule ${e.schedule_paused.name}: paused${e.schedule_paused.reason ? ` (${JSON.stringify(e.schedule_paused.reason)})` : ''}; it makes no wants until resumed`;
    case 'schedule_resumed':
      return `schedule ${e.schedule_resumed.name}: resumed`;
    default:
      return undefined;
  }
}
