/** One job run: its config and how it ended, and its log streamed live (SSE) while it runs. */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { JobRunView } from '../../../lib/api/views.js';
import { waitingForWorker } from '../../../lib/api/run-placement.js';
import { get } from '../api.js';
import { Link } from '../components/link.js';
import { Fact, PartitionLinks } from '../components/facts.js';
import { ErrorNote, Status, When, duration } from '../components/status.js';
import { useLive } from '../hooks.js';
import { RunDuration, runDuration, workerOf } from './job-runs-page.js';
import { groupDigits as n } from '../../../lib/group-digits.js';

/** An argument as a shell would need it written: as it is when plain, else in single quotes. */
export const shellWord = (arg: string): string => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`);

/**
 * Most lines kept on the page; older ones scroll away (the whole log: the raw link). The follow starts that many
 * lines from the end: a 50 MB log is not sent to the page to be thrown away. A dropped stream is resumed by
 * EventSource itself, which sends the last line's id (a byte offset) as Last-Event-ID: the server goes on from
 * there (not from the tail again), so no line comes twice.
 */
const MAX_LINES = 5000;
/**
 * Most characters of a line shown, and of all the lines kept. The page's text is joined again at each frame that
 * brings lines, so what it keeps is what each frame costs: a job writing lines of 200 KB (a JSON dump a row) had its
 * page take in 4 lines a second, a CPU busy for minutes (QA, session 36). A line cut says so; the raw log has it all.
 */
const MAX_LINE_CHARS = 2_000;
const MAX_CHARS = 1_000_000;

/** The mark the follow ends a line with that it cut at 256 KiB (follow-file.ts), with the line's whole size. */
const FOLLOW_CUT = / … \[line cut: \d+ bytes, followed to \d+; the log read whole has all of it\]$/;

/**
 * A line as the page shows it: cut at MAX_LINE_CHARS, saying how much more the raw log has; a line the follow had cut
 * already keeps the follow's mark, which has the line's whole size (what came is only the first 256 KiB of it).
 */
export function shownLine(line: string): string {
  if (line.length <= MAX_LINE_CHARS) return line;
  const cut = FOLLOW_CUT.exec(line);
  if (cut) return `${line.slice(0, MAX_LINE_CHARS)}${cut[0]}`;
  return `${line.slice(0, MAX_LINE_CHARS)}… [${(line.length - MAX_LINE_CHARS).toLocaleString('en')} more characters: the raw log has the whole line]`;
}

/** The newest lines that fit MAX_LINES and MAX_CHARS, and whether older ones were let go. */
function keepNewest(lines: string[]): { kept: string[]; dropped: boolean } {
  let first = Math.max(0, lines.length - MAX_LINES);
  let chars = 0;
  for (let i = lines.length - 1; i >= first; i--) {
    chars += lines[i]!.length + 1;
    if (chars > MAX_CHARS) {
      first = i + 1;
      break;
    }
  }
  return { kept: first === 0 ? lines : lines.slice(first), dropped: first > 0 };
}

function LiveLog({ id, stream }: { id: string; stream: 'stdout' | 'stderr' }) {
  const [lines, setLines] = useState<string[]>([]);
  const [dropped, setDropped] = useState(false);
  const [ended, setEnded] = useState<string | undefined>(undefined);
  const [gone, setGone] = useState<string | undefined>(undefined);
  const box = useRef<HTMLPreElement>(null);
  useEffect(() => {
    setLines([]);
    setDropped(false);
    setEnded(undefined);
    setGone(undefined);
    const source = new EventSource(`/api/job_runs/${encodeURIComponent(id)}/logs/${stream}?follow=true&tail=${MAX_LINES}`);
    let pending: string[] = [];
    let frame = 0;
    source.addEventListener('log', (m) => {
      pending.push(shownLine((m as MessageEvent<string>).data));
      frame ||= requestAnimationFrame(() => {
        frame = 0;
        const add = pending;
        pending = [];
        setLines((old) => {
          const { kept, dropped } = keepNewest([...old, ...add]);
          if (dropped) setDropped(true);
          return kept;
        });
      });
    });
    source.addEventListener('end', (m) => {
      setEnded((m as MessageEvent<string>).data);
      source.close();
    });
    // A refused stream (not a dropped one, which EventSource retries): say why, e.g. 410 when retention removed the log.
    source.addEventListener('error', () => {
      if (source.readyState !== EventSource.CLOSED) return;
      fetch(`/api/job_runs/${encodeURIComponent(id)}/logs/${stream}?tail=1`)
        .then(async (r) => (r.ok ? undefined : ((await r.json()) as { error?: string }).error ?? `HTTP ${r.status}`))
        .then(setGone, () => setGone('The daemon cannot be reached.'));
    });
    return () => {
      source.close();
      cancelAnimationFrame(frame);
    };
  }, [id, stream]);
  useEffect(() => {
    const el = box.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [lines.length]);
  return (
    <>
      <pre class="log" ref={box} aria-label={`${stream} of ${id}`} aria-live="polite" data-lines={lines.length}>
        {lines.join('\n')}
      </pre>
      <p class="dim">
        {gone ?? (ended !== undefined ? endNote(ended, stream, lines.length === 0) : 'Following the log…')}{' '}
        {/* MAX_LINES came: the follow began that many lines from the end, so older ones were left out. */}
        {dropped || lines.length >= MAX_LINES ? `The last ${lines.length} lines; the whole log: ` : null}
        <a href={`/api/job_runs/${encodeURIComponent(id)}/logs/${stream}`}>raw</a>
      </p>
    </>
  );
}

/** The log stream's `end` event (`{"status", "exit_code", "signal"}`) in words: how the run ended, and that the stream is empty when it is. */
export function endNote(data: string, stream: string, empty: boolean): string {
  let how = 'ended';
  try {
    const end = JSON.parse(data) as { status?: unknown; exit_code?: unknown; signal?: unknown };
    if (typeof end.status === 'string') how = end.status;
    if (typeof end.signal === 'string' && end.signal !== '') how += ` (killed by ${end.signal})`;
    else if (typeof end.exit_code === 'number' && end.exit_code >= 0) how += ` (exit ${end.exit_code})`;
  } catch {
    // An end the page cannot read still ends the log.
  }
  return `The run ${how}${empty ? `; it wrote nothing to ${stream}` : ''}.`;
}

export function JobRunPage({ id }: { id: string }) {
  const loaded = useLive((signal) => get<JobRunView>(`/api/job_runs/${encodeURIComponent(id)}`, signal), [id], (e) => e.type.startsWith('job_run_'));
  const [stream, setStream] = useState<'stdout' | 'stderr'>('stdout');
  const r = loaded.data;
  return (
    <section>
      <h1>
        Job run {id} {r ? <Status status={r.status} /> : null}
      </h1>
      <ErrorNote error={loaded.error} />
      {r ? (
        <div class="card">
          <dl class="facts">
            <Fact name="job" label="Job">
              {r.job_label}
            </Fact>
            <Fact name="outputs" label="Outputs">
              <PartitionLinks refs={r.outputs} total={r.outputs_total} />
            </Fact>
            {r.config.inputs.length > 0 ? (
              <Fact name="inputs" label="Inputs">
                <PartitionLinks refs={r.config.inputs.map((i) => i.partition_ref)} total={r.inputs_total} />
              </Fact>
            ) : null}
            {r.missing.length > 0 ? (
              <Fact name="missing" label="Missing inputs">
                <PartitionLinks refs={r.missing} />
              </Fact>
            ) : null}
            <Fact name="wants" label="Wants">
              {r.want_ids.slice(0, 20).map((w) => (
                <Link href={`/wants/${encodeURIComponent(w)}`} class="chip">{w}</Link>
              ))}
              {r.wants_total > 20 ? <span class="dim"> +{n(r.wants_total - 20)} more</span> : null}
            </Fact>
            <Fact name="attempt" label="Attempt">
              {r.attempt}
            </Fact>
            <Fact name="priority" label="Priority">
              {r.priority}
            </Fact>
            <Fact name="queued" label="Queued">
              <When iso={r.queued_at} />
            </Fact>
            {r.started_at && waitingForWorker(r) ? (
              <Fact name="started" label="Started">
                not yet: waiting for a worker since <When iso={r.started_at} />
              </Fact>
            ) : r.started_at ? (
              <Fact name="started" label="Started">
                <When iso={r.started_at} />
              </Fact>
            ) : null}
            {r.ended_at ? (
              <Fact name="ended" label="Ended">
                <When iso={r.ended_at} />
              </Fact>
            ) : null}
            {runDuration(r) ? (
              <Fact name="duration" label="Duration">
                <RunDuration run={r} />
              </Fact>
            ) : null}
            {r.retry_at ? (
              <Fact name="retry_at" label="Retry at">
                <When iso={r.retry_at} />
              </Fact>
            ) : null}
            {r.retried_by ? (
              <Fact name="retried_by" label="Retried as">
                <Link href={`/job_runs/${encodeURIComponent(r.retried_by)}`}>{r.retried_by}</Link>
              </Fact>
            ) : null}
            {r.exit_code !== null || r.signal !== null || r.reason ? (
              <Fact name="exit" label="Exit">
                {r.exit_code ?? r.signal ?? ''} {r.reason ?? ''}
              </Fact>
            ) : null}
            {r.worker ? (
              <Fact name="worker" label="Worker">
                {workerOf(r)}
              </Fact>
            ) : null}
            {r.pid !== null ? (
              <Fact name="pid" label="PID">
                {r.pid}
              </Fact>
            ) : null}
            <Fact name="command" label="Command">
              {/* Its breaks and spaces kept (pre-wrap): a script given as an argument (bash -c, python -c) folded into
                  one line reads, and copies, as another program. */}
              <code class="command">{[...r.exec, ...r.config.args].map(shellWord).join(' ')}</code>
            </Fact>
            {r.timeout_seconds > 0 ? (
              <Fact name="timeout" label="Timeout">
                {duration(r.timeout_seconds * 1000)}
              </Fact>
            ) : null}
          </dl>
        </div>
      ) : null}
      {/* Once the run is read: an unknown id has no log to follow, and its page says so once. */}
      {r ? (
        <>
          <div class="row" role="tablist" aria-label="Log stream">
            {(['stdout', 'stderr'] as const).map((s) => (
              <button type="button" role="tab" aria-selected={stream === s} class={stream === s ? 'tab active' : 'tab'} onClick={() => setStream(s)}>
                {s}
              </button>
            ))}
          </div>
          <LiveLog id={id} stream={stream} />
        </>
      ) : null}
    </section>
  );
}
