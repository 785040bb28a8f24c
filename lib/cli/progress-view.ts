/**
 * Where a followed build's progress goes: redrawn in place on a terminal (a live block under the permanent lines
 * of ended runs), one plain line per job run change in a pipe, nothing with --json.
 */
import { groupDigits } from '../group-digits.js';
import { type Subscription, interval } from 'rxjs';
import { countRuns, elapsed, plainLine, renderProgress, type BuildModel, type Paint, type RunChange } from './build-progress.js';
import { colors, line } from './output.js';
import { outputWidth } from './table-layout.js';

const REDRAW_MS = 100;

/**
 * Past this many runs a line per run is noise: the bar says how far it is, and only failures get a line of their
 * own (and, in a pipe, a line at each tenth of the runs ended).
 */
export const MANY_RUNS = 300;

/** Many runs, or a want of so many partitions that there will be. */
const many = (model: BuildModel): boolean => model.runs.size > MANY_RUNS || model.wantedRefs.size > MANY_RUNS;

const worthALine = (model: BuildModel, c: RunChange): boolean => !many(model) || (c.status === 'failed' && !c.run.retrying);

/** Where progress goes: redrawn on a terminal, plain lines in a pipe, nothing with --json. */
export interface ProgressView {
  start(): void;
  changes(changes: RunChange[]): void;
  note(text: string, at?: number): void;
  refresh(): void;
  stop(): void;
}

const paint: Paint = {
  good: (s) => colors.green(s),
  bad: (s) => colors.red(s),
  busy: (s) => colors.yellow(s),
  dim: (s) => colors.dim(s),
  bold: (s) => colors.bold(s),
};

export class PlainView implements ProgressView {
  private tenth = 0;
  constructor(private readonly model: BuildModel) {}
  start(): void {}
  changes(changes: RunChange[]): void {
    for (const c of changes) if (worthALine(this.model, c)) line(plainLine(c, this.model.startedAt));
    if (!many(this.model)) return;
    const counts = countRuns(this.model);
    const ended = counts.total - counts.queued - counts.running;
    // A big want queues its runs a window at a time: out of the runs known so far, the first to end would read as
    // all of them. Until more runs than wanted refs are known, each wanted ref counts for one run to come.
    const expected = Math.max(counts.total, this.model.wantedRefs.size);
    const tenth = Math.floor((ended / expected) * 10);
    if (tenth > this.tenth) {
      this.tenth = tenth;
      this.note(`${groupDigits(ended)}/${groupDigits(expected)} job runs ended (${groupDigits(counts.succeeded)} succeeded, ${groupDigits(counts.failed)} failed)`);
    }
  }
  note(text: string, at = Date.now()): void {
    line(`[${elapsed(at - this.model.startedAt)}] ${text}`);
  }
  refresh(): void {}
  stop(): void {}
}

export class SilentView implements ProgressView {
  start(): void {}
  changes(): void {}
  note(): void {}
  refresh(): void {}
  stop(): void {}
}

/** The live block at the bottom of the terminal; ended runs are printed above it as permanent lines. */
export class TtyView implements ProgressView {
  private drawn = 0;
  private redraws: Subscription | undefined;
  private stopped = false;
  private readonly out = process.stdout;

  constructor(private readonly model: BuildModel) {}

  start(): void {
    this.out.write('\x1b[?25l');
    process.once('exit', () => this.out.write('\x1b[?25h'));
    // Elapsed times tick on screen even when no event comes.
    this.redraws = interval(REDRAW_MS).subscribe(() => this.refresh());
    this.refresh();
  }

  changes(changes: RunChange[]): void {
    const ended = changes.filter((c) => c.status !== 'queued' && c.status !== 'running' && worthALine(this.model, c));
    if (ended.length > 0) {
      this.clear();
      for (const c of ended) this.out.write(`${this.permanent(c)}\n`);
    }
    this.refresh();
  }

  note(text: string): void {
    this.clear();
    this.out.write(`${text}\n`);
    this.refresh();
  }

  private permanent(c: RunChange): string {
    const text = plainLine(c, this.model.startedAt);
    if (c.status === 'succeeded') return `${colors.green('✓')} ${text}`;
    if (c.status === 'failed') return `${colors.red('✗')} ${c.run.retrying ? text : colors.red(text)}`;
    return `${colors.magenta('•')} ${text}`;
  }

  refresh(): void {
    if (this.stopped) return;
    // The width the tables take (COLUMNS, else the terminal's), so the block and the summary under it agree.
    const width = Math.max(20, (outputWidth(this.out) ?? 80) - 1);
    const lines = renderProgress(this.model, Date.now(), width, paint);
    this.clear();
    this.out.write(lines.join('\n'));
    this.drawn = lines.length;
  }

  private clear(): void {
    if (this.drawn === 0) return;
    this.out.write(`\r${this.drawn > 1 ? `\x1b[${this.drawn - 1}A` : ''}\x1b[J`);
    this.drawn = 0;
  }

  stop(): void {
    if (this.stopped) return;
    this.redraws?.unsubscribe();
    this.clear();
    this.stopped = true;
    this.out.write('\x1b[?25h');
  }
}

