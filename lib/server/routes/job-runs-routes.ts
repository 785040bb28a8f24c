import { open, type FileHandle } from 'node:fs/promises';
import { LIST_JOB_RUNS, LIST_WANTS } from '../../api/list-them.js';
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { logsExpired } from '../../executor/job-log-retention.js';
import { pipeline } from 'node:stream/promises';
import { Router } from 'express';
import { notFoundReason } from '../pruned-ids.js';
import { Check } from '@sinclair/typebox/value';
import type { Page } from '../../api/page.js';
import type { JobRunView } from '../../api/views.js';
import { ACTIVE_JOB_RUN_STATUSES, type JobRunRecord } from '../../state/build-state.js';
import { JobRunListQuerySchema, LogQuerySchema, LogStreamSchema } from '../../api/schemas/job-runs.js';
import { listJobRuns } from '../queries.js';
import { jobRunView } from '../views.js';
import { HttpError } from '../http-error.js';
import { toPageQuery } from '../request-parsing.js';
import { validateQuery } from '../validate.js';
import type { ServerContext } from '../server-context.js';
import { sendSse, writable } from '../sse.js';
import { FOLLOWED_LINE_BYTES, followStart, logMessages } from '../log-follow.js';
import { tailStart } from '../../executor/log-tail.js';

export function jobRunsRoutes({ platform, shutdown$, sse }: ServerContext): Router {
  const router = Router();

  const runOr404 = (id: string): JobRunRecord => {
    const run = platform.state().job_runs.get(id);
    if (!run) throw new HttpError(404, `No job run with id '${id}'${notFoundReason(id, 'r-', platform.state().created.job_runs)}. ${LIST_JOB_RUNS}`);
    return run;
  };

  router.get('/api/job_runs', (req, res) => {
    const q = validateQuery(JobRunListQuerySchema, req.query);
    const state = platform.state();
    const want = q.want_id === undefined ? undefined : state.wants.get(q.want_id);
    if (q.want_id !== undefined && !want) {
      throw new HttpError(404, `No want with id '${q.want_id}'${notFoundReason(q.want_id, 'w-', state.created.wants)}. ${LIST_WANTS}`, q.want_id);
    }
    res.json(listJobRuns(state, { ...toPageQuery(q), ...(q.status ? { status: q.status } : {}), ...(want ? { want } : {}) }) satisfies Page<JobRunView>);
  });

  router.get('/api/job_runs/:id', (req, res) => {
    res.json(jobRunView(platform.state(), runOr404(req.params.id)) satisfies JobRunView);
  });

  router.get('/api/job_runs/:id/logs/:stream', async (req, res) => {
    const stream = req.params.stream;
    if (!Check(LogStreamSchema, stream)) {
      throw new HttpError(404, `No log '${stream}'; a job run has 'stdout' and 'stderr'.`);
    }
    const run = runOr404(req.params.id);
    const file = platform.logPath(run.job_run_id, stream);
    const days = platform.jobLogsDays();
    // Gone means there were logs: an executor that does not make each run's directory (an embedder's, which may keep
    // its logs elsewhere or none) leaves nothing to remove, and its runs' logs read as what is there, empty if nothing.
    const kept = platform.executorKeepsRunLogs();
    if (kept && logsExpired(run, days, Date.now()) && !existsSync(file)) {
      throw new HttpError(
        410,
        `The logs of job run ${run.job_run_id} were removed: finished runs keep their logs ${days} days (retention.job_logs_days in platform.json).`,
      );
    }
    // A run that started has its log directory from its start (a run that printed nothing has empty logs in it), so
    // a finished one without it lost its logs: to a gc under another retention than today's, or by hand. Read as
    // empty, the logs of a run that printed said it printed nothing.
    const logDir = dirname(file);
    if (kept && !ACTIVE_JOB_RUN_STATUSES.has(run.status) && run.started_at !== null && !existsSync(logDir)) {
      throw new HttpError(
        410,
        `The logs of job run ${run.job_run_id} are gone: its log directory ${logDir} is not there (removed by platform gc under ` +
          `an earlier retention.job_logs_days, or deleted). The run itself is kept (GET /api/job_runs/${run.job_run_id}).`,
      );
    }
    const { follow, tail = 0 } = validateQuery(LogQuerySchema, req.query);
    if (follow === 'true' || follow === '1') {
      const start = await followStart(file, req.get('Last-Event-ID'), tail);
      // Paced by the socket: the next chunk of the file is read once what was sent has drained, so a slow reader
      // of a long log holds a chunk in memory, not the log, and never meets sse.ts's cap on unread bytes.
      const from = (offset: number) =>
        logMessages(
          platform.logFileLines$(run.job_run_id, stream, { start: offset, ready: writable(res), maxLineBytes: FOLLOWED_LINE_BYTES }),
          platform.jobRunEnded$(run.job_run_id),
        );
      // A chunk of short lines framed can pass what a stream may hold unread (64 KiB of empty lines is ~2 MiB of
      // frames): cut there, the follow goes on from the last line written, as an event stream does from its last id.
      sendSse(req, res, from(start), shutdown$, sse, from);
      return;
    }
    let handle: FileHandle;
    try {
      handle = await open(file, 'r');
    } catch (err) {
      // No log (yet): the run has not started, or printed nothing.
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return void res.type('text/plain; charset=utf-8').send('');
      throw err;
    }
    let start = 0;
    try {
      // `?tail=N`: only the last N lines; without it, the whole log.
      if (tail > 0) start = await tailStart(handle, tail);
    } catch (err) {
      await handle.close();
      throw err;
    }
    res.type('text/plain; charset=utf-8');
    // A HEAD is answered by the log's size, not by reading it to send nothing (express runs GET routes for HEAD): a
    // `curl -I` of a 300 MB log read all of it, and said no length.
    if (req.method === 'HEAD') {
      try {
        const { size } = await handle.stat();
        res.set('Content-Length', String(Math.max(0, size - start))).end();
      } finally {
        await handle.close();
      }
      return;
    }
    // Streamed, never read whole into memory: a log can be gigabytes. The stream closes the handle.
    const source = handle.createReadStream({ start });
    // A read that failed while the reader was still there is a fault (pipeline destroys the response whatever failed,
    // so `res.destroyed` cannot tell the two apart afterwards).
    let readFault: Error | undefined;
    source.once('error', (err) => {
      if (!res.destroyed) readFault = err;
    });
    try {
      await pipeline(source, res);
    } catch (err) {
      // The reader went away before the end (a page left, `| head`): nothing went wrong here.
      if (readFault === undefined) return;
      throw readFault;
    }
  });

  return router;
}
