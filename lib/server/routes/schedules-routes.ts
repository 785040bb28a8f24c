import { Router } from 'express';
import type { Page } from '../../api/page.js';
import type { ScheduleChangeReply, ScheduleView } from '../../api/schedules.js';
import { PauseScheduleBodySchema, ResumeScheduleBodySchema } from '../../api/schemas/schedules.js';
import type { ScheduleDefinition } from '../../graph/schedule-definition.js';
import type { CommandResult } from '../../orchestrator/command.js';
import { awaitCommand } from '../command-reply.js';
import { HttpError } from '../http-error.js';
import { pageQuery } from '../request-parsing.js';
import { listSchedules, scheduleView } from '../schedule-queries.js';
import type { ServerContext } from '../server-context.js';
import { validateOptionalBody } from '../validate.js';

export function schedulesRoutes({ platform }: ServerContext): Router {
  const router = Router();

  /** The schedule of platform.json (re-read if it changed) by that name, or a 404 that says how to list them. */
  const scheduleNamed = async (name: string): Promise<ScheduleDefinition> => {
    await platform.refreshGraph();
    const s = platform.resolver.graph.schedules.find((x) => x.name === name);
    if (!s) throw new HttpError(404, `No schedule named '${name}' in platform.json. List them: platform schedules (GET /api/schedules).`);
    return s;
  };

  /** A pause's or resume's answer, from the state its own step made (so it shows what it did). */
  const changeReply = (s: ScheduleDefinition, result: Extract<CommandResult, { ok: true }>): ScheduleChangeReply => {
    if (!result.schedule) throw new Error('orchestrator replied to a schedule change without the schedule');
    const { changed, skipped, skipped_at_least } = result.schedule;
    return { changed, skipped_ticks: skipped, skipped_ticks_at_least: skipped_at_least, schedule: scheduleView(result.state, s, Date.now()) };
  };

  router.get('/api/schedules', async (req, res) => {
    await platform.refreshGraph();
    res.json(listSchedules(platform.state(), platform.resolver.graph.schedules, pageQuery(req.query), Date.now()) satisfies Page<ScheduleView>);
  });

  router.get('/api/schedules/:name', async (req, res) => {
    const s = await scheduleNamed(req.params.name);
    res.json(scheduleView(platform.state(), s, Date.now()) satisfies ScheduleView);
  });

  /**
   * Pauses a schedule (`{"reason"?}`): no wants until it is resumed; recorded in the log, so it holds across restarts.
   * A second pause is a no-op 200 with `changed: false`, as a second cancel of a want is.
   */
  router.post('/api/schedules/:name/pause', async (req, res) => {
    // No body at all is a pause without a reason: `curl -X POST .../pause` (one that is not JSON was refused: json-body.ts).
    const body = validateOptionalBody(PauseScheduleBodySchema, req.body, { what: 'a pause', example: '{"reason": "the upstream feed is down"}' });
    const s = await scheduleNamed(req.params.name);
    const result = await awaitCommand(() => platform.pauseSchedule(s.name, body.reason ?? ''));
    res.json(changeReply(s, result) satisfies ScheduleChangeReply);
  });

  /** Resumes a paused schedule: the ticks due while it was paused are recorded as skipped, not made. */
  router.post('/api/schedules/:name/resume', async (req, res) => {
    validateOptionalBody(ResumeScheduleBodySchema, req.body, { what: 'a resume', example: '{} (or no body)' });
    const s = await scheduleNamed(req.params.name);
    const result = await awaitCommand(() => platform.resumeSchedule(s.name));
    res.json(changeReply(s, result) satisfies ScheduleChangeReply);
  });

  return router;
}
