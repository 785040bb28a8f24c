/**
 * Where a followed want's progress goes: redrawn in place on a terminal (ended runs printed above the live block
 * as permanent lines), one plain line per job run change in a pipe, nothing with --json.
 */
import { type SchedulerLike, type Subscription, asyncScheduler, interval } from 'rxjs';
import { type BuildModel, type Paint, type RunChange, elapsed, plainLine, renderProgress } from './build-progress.js';
import { colors, line } from './output.js';

const REDRAW_MS = 100;

export interface ProgressView {
  start(): void;
  changes(changes: RunChange[]): void;
  note(text: string, at?: number): void;
  stop(): void;
}

export function progressView(model: BuildModel, mode: 'tty' | 'plain' | 'silent', scheduler: SchedulerLike = asyncScheduler): ProgressView {
  if (mode === 'tty') return new TtyView(model, scheduler);
  if (mode === 'plain') return new PlainView(model);
  return SILENT;
}

const paint: Paint = {
  good: (s) => colors.green(s),
  bad: (s) => colors.red(s),
  busy: (s) => colors.yellow(s),
  dim: (s) => colors.dim(s),
  bold: (s) => colors.bold(s),
};

class PlainView implements ProgressView {
  constructor(private readonly model: BuildModel) {}
  start(): void {}
  changes(changes: RunChange[]): void {
    for (const c of changes) line(plainLine(c, this.model.startedAt));
  }
  note(text: string, at = Date.now()): void {
    line(`[${elapsed(at - this.model.startedAt)}] ${text}`);
  }
  stop(): void {}
}

const SILENT: ProgressView = { start() {}, changes() {}, note() {}, stop() {} };

/** The live block at the bottom of the terminal, redrawn on every change and on a tick (elapsed times move). */
class TtyView implements ProgressView {
  private drawn = 0;
  private ticks: Subscription | undefined;
  private stopped = false;
  private readonly out = process.stdout;

  constructor(
    private readonly model: BuildModel,
    private readonly scheduler: SchedulerLike,
  ) {}

  start(): void {
    this.out.write('\x1b[?25l');
    process.once('exit', () => this.out.write('\x1b[?25h'));
    this.ticks = interval(REDRAW_MS, this.scheduler).subscribe(() => this.refresh());
    this.refresh();
  }

  changes(changes: RunChange[]): void {
    const ended = changes.filter((c) => c.status !== 'queued' && c.status !== 'running');
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

  private refresh(): void {
    if (this.stopped) return;
    const width = Math.max(20, (this.out.columns || 80) - 1);
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
    this.ticks?.unsubscribe();
    this.clear();
    this.stopped = true;
    this.out.write('\x1b[?25h');
  }
}
