import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Router } from 'express';
import { Observable, filter, map, take } from 'rxjs';
import { STDERR_LOG, STDOUT_LOG } from '../../executor/job-launch.js';
import { followFile } from '../../executor/follow-file.js';
import { ACTIVE_JOB_RUN_STATUSES, JOB_RUN_STATUSES, type JobRunRecord } from '../../state/build-state.js';
import { listJobRuns } from '../../state/queries.js';
import { jobRunView } from '../../state/views.js';
import { HttpError } from '../http-error.js';
import { enumParam, pageQuery } from '../request-parsing.js';
import type { ServerContext } from '../server-context.js';
import { sendSse, type SseMessage } from '../sse.js';

export function jobRunsRoutes({ platform, shutdown$ }: ServerContext): Router {
  const router = Router();

  const runOr404 = (id: string): JobRunRecord => {
    const run = platform.state().job_runs.get(id);
    if (!run) throw new HttpError(404, `No job run with id '${id}'.`);
    return run;
  };

  router.get('/api/job_runs', (req, res) => {
    const status = enumParam(req.query, 'status', JOB_RUN_STATUSES);
    res.json(listJobRuns(platform.state(), { ...pageQuery(req.query), ...(status ? { status } : {}) }));
  });

  router.get('/api/job_runs/:id', (req, res) => {
    res.json(jobRunView(runOr404(req.params.id)));
  });

  router.get('/api/job_runs/:id/logs/:stream', async (req, res) => {
    const stream = req.params.stream;
    if (stream !== 'stdout' && stream !== 'stderr') {
      throw new HttpError(404, `No log '${stream}'; a job run has 'stdout' and 'stderr'.`);
    }
    const run = runOr404(req.params.id);
    const file = join(platform.workspaceRoot, '.platform', 'logs', run.job_run_id, stream === 'stdout' ? STDOUT_LOG : STDERR_LOG);
    const follow = enumParam(req.query, 'follow', ['true', 'false', '1', '0'] as const);
    if (follow === 'true' || follow === '1') {
      const ended$ = platform.state$.pipe(
        map((s) => s.job_runs.get(run.job_run_id)),
        filter((r): r is JobRunRecord => r !== undefined && !ACTIVE_JOB_RUN_STATUSES.has(r.status)),
        take(1),
      );
      sendSse(req, res, logMessages(followFile(file, ended$), ended$), shutdown$);
      return;
    }
    const text = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return '';
      throw err;
    });
    res.type('text/plain; charset=utf-8').send(text);
  });

  return router;
}

/** `event: log` per line, then `event: end` with how the run ended. */
function logMessages(lines$: Observable<string>, ended$: Observable<JobRunRecord>): Observable<SseMessage> {
  return new Observable<SseMessage>((subscriber) => {
    let last: JobRunRecord | undefined;
    const endSub = ended$.subscribe((r) => (last = r));
    const sub = lines$.subscribe({
      next: (line) => subscriber.next({ event: 'log', data: line }),
      error: (err: unknown) => subscriber.error(err),
      complete: () => {
        const end = last ? { status: last.status, exit_code: last.exit_code } : { status: 'unknown', exit_code: null };
        subscriber.next({ event: 'end', data: JSON.stringify(end) });
        subscriber.complete();
      },
    });
    return () => {
      sub.unsubscribe();
      endSub.unsubscribe();
    };
  });
}
