import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { MISSING_DEPS_MARKER, STDERR_LOG, STDOUT_LOG } from './job-launch.js';

/** Longest partial line kept while scanning for the missing-deps marker; longer lines are skipped. */
const MAX_SCAN_LINE = 1 << 20;

/**
 * What a run reported of its missing inputs: the refs, and what was wrong with a marker line that could not be read
 * (the first such), so a run that printed one and failed says why no input was built for it.
 */
export interface MissingReport {
  readonly missing: Set<string>;
  problem?: string;
}

/** Scans a byte stream line by line for `PLATFORM_MISSING_DEPS {"missing": [...]}` and collects the refs. */
export class MissingDepsScanner {
  private readonly decoder = new StringDecoder('utf8');
  private partial = '';
  private skipping = false;

  constructor(readonly report: MissingReport = { missing: new Set() }) {}

  get missing(): Set<string> {
    return this.report.missing;
  }

  push(chunk: Buffer | string): void {
    this.feed(typeof chunk === 'string' ? chunk : this.decoder.write(chunk));
  }

  end(): void {
    this.feed(this.decoder.end());
    if (!this.skipping && this.partial !== '') this.line(this.partial);
    this.partial = '';
    this.skipping = false;
  }

  private feed(text: string): void {
    let start = 0;
    for (;;) {
      const nl = text.indexOf('\n', start);
      if (nl < 0) break;
      if (!this.skipping) this.line(this.partial + text.slice(start, nl));
      this.partial = '';
      this.skipping = false;
      start = nl + 1;
    }
    if (this.skipping) return;
    this.partial += text.slice(start);
    if (this.partial.length > MAX_SCAN_LINE) {
      this.partial = '';
      this.skipping = true;
    }
  }

  private line(raw: string): void {
    const line = raw.trim();
    if (!line.startsWith(MISSING_DEPS_MARKER)) return;
    const rest = line.slice(MISSING_DEPS_MARKER.length);
    if (rest !== '' && !/^\s/.test(rest)) return; // e.g. PLATFORM_MISSING_DEPS_X
    let parsed: unknown;
    try {
      parsed = JSON.parse(rest);
    } catch (err) {
      // Only a line meant as the report (its JSON begins) is told of: "PLATFORM_MISSING_DEPS is not set" is not one.
      if (rest.trimStart().startsWith('{')) this.report.problem ??= `its ${MISSING_DEPS_MARKER} line is not JSON (${err instanceof Error ? err.message : String(err)})`;
      return;
    }
    const refs = (parsed as { missing?: unknown } | null)?.missing;
    if (!Array.isArray(refs)) {
      this.report.problem ??= `its ${MISSING_DEPS_MARKER} line has no "missing" list of refs`;
      return;
    }
    // The refs it names are taken; what is not one is passed over (told only if no ref at all was read).
    for (const ref of refs) if (typeof ref === 'string' && ref !== '') this.missing.add(ref);
    if (refs.some((ref) => typeof ref !== 'string' || ref === '')) this.report.problem ??= `its ${MISSING_DEPS_MARKER} line lists something that is not a ref`;
  }
}

/**
 * The refs a run reported missing, read back from its log files once it failed (a supervised job writes straight
 * to its files, so nothing scans the output as it flows). Unreadable files report nothing.
 */
export async function missingDepsInLogs(logDir: string): Promise<MissingReport> {
  const report: MissingReport = { missing: new Set() };
  for (const name of [STDOUT_LOG, STDERR_LOG]) {
    const scanner = new MissingDepsScanner(report);
    try {
      for await (const chunk of createReadStream(join(logDir, name))) scanner.push(chunk as Buffer);
    } catch {
      // A log that cannot be read tells of no missing input.
    }
    scanner.end();
  }
  return report;
}
