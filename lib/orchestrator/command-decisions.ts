/**
 * Each command of a step decided and answered: a want, a backfill, a taint, a want's cancel, a schedule's pause or
 * resume. A refused command records nothing; the reply says why.
 */
import { LIST_WANTS } from '../api/list-them.js';
import { someNamed } from '../some-named.js';
import { BACKFILL_REBUILD } from '../api/backfill-policy.js';
import { TERMINAL_WANT_STATUSES } from '../state/build-state.js';
import { currentConsumers } from '../state/staleness.js';
import { cancelWant } from './cancel-want.js';
import type { Command, CommandDecision, CreateBackfillRequest, CreateTaintRequest } from './command.js';
import { backfillRequestProblem, expiredWantProblem, taintRequestProblem, textProblem, typeName, wantRequestProblem } from './request-checks.js';
import { pauseSchedule, resumeSchedule } from './schedule-ticks.js';
import type { StepDraft } from './step-draft.js';
import { createRootWant } from './want-creation.js';


export function decideCommand(d: StepDraft, c: Command): CommandDecision {
  if (c.kind === 'create_want') {
    const r = c.request;
    const problem = wantRequestProblem(r) ?? expiredWantProblem(r, d.input.now);
    if (problem) return { ok: false, status: 400, error: problem };
    const want_id = createRootWant(d, {
      partitions: r.partitions,
      comment: r.comment,
      data_timestamp: r.data_timestamp,
      ttl_seconds: r.ttl_seconds,
      sla_seconds: r.sla_seconds,
      rebuild: r.rebuild ?? 'missing',
      priority: r.priority ?? 0,
    });
    return { ok: true, status: 201, want_id };
  }
  if (c.kind === 'create_taint') return createTaint(d, c.request);
  if (c.kind === 'create_backfill') return createBackfill(d, c.request);
  if (c.kind === 'pause_schedule') return pauseSchedule(d, c.name, c.reason, c.requested_at);
  if (c.kind === 'resume_schedule') return resumeSchedule(d, c.name);
  // An embedder's JavaScript can hand anything: a number compared as an id named another want, undefined failed the step.
  if (typeof c.want_id !== 'string') return { ok: false, status: 400, error: `want_id must be a want's id, a string like 'w-12', got ${typeName(c.want_id)}.` };
  const want = d.state.wants.get(c.want_id);
  if (!want) return { ok: false, status: 404, error: `No want with id '${c.want_id}'. ${LIST_WANTS}`, want_id: c.want_id };
  if (want.status === 'canceled') return { ok: true, status: 200, want_id: want.want_id };
  if (TERMINAL_WANT_STATUSES.has(want.status)) {
    return {
      ok: false,
      status: 409,
      error: `Want '${want.want_id}' is already ${want.status}; only a want that is still building can be canceled.`,
      want_id: want.want_id,
    };
  }
  const problem = textProblem(c.reason, 'reason');
  if (problem) return { ok: false, status: 400, error: problem, want_id: want.want_id };
  // A derived want is its parent's ask for an input: canceled while the parent still wants it, the parent asks again at
  // once, and the run canceled with it starts over from nothing. The cancel that stops the work is its root's.
  const parent = want.parent_want_id ? d.state.wants.get(want.parent_want_id) : undefined;
  if (parent && !TERMINAL_WANT_STATUSES.has(parent.status)) {
    const root = d.state.wants.get(want.root_want_id) ?? parent;
    return {
      ok: false,
      status: 409,
      error:
        `Want '${want.want_id}' was derived for the inputs of '${parent.want_id}', which still needs them: canceled, it would be asked for again at once ` +
        `and its run started over. Cancel ${root.backfill_id ? `the backfill it serves instead: platform backfills cancel ${root.backfill_id} (DELETE /api/backfills/${root.backfill_id})` : `the want it serves instead: platform want cancel ${root.want_id} (DELETE /api/wants/${root.want_id})`}.`,
      want_id: want.want_id,
    };
  }
  cancelWant(d, want, c.reason);
  return { ok: true, status: 200, want_id: want.want_id };
}

/** A backfill is a want that goes on past failures, scheduled a window at a time, with its own cap. */
function createBackfill(d: StepDraft, r: CreateBackfillRequest): CommandDecision {
  const problem = backfillRequestProblem(r);
  if (problem) return { ok: false, status: 400, error: problem };
  const backfill_id = `bf-${d.state.created.backfills + 1}`;
  const want_id = createRootWant(d, {
    partitions: r.partitions,
    comment: r.comment,
    rebuild: BACKFILL_REBUILD[r.policy],
    priority: r.priority,
    backfill_id,
    max_concurrent_job_runs: r.max_concurrent_job_runs,
    pattern: r.pattern,
  });
  return { ok: true, status: 201, want_id, backfill: { backfill_id, partitions: d.state.wants.get(want_id)?.partitions.length ?? 0 } };
}

/**
 * A taint of built partitions, and with `downstream` of every partition whose current build consumed a tainted
 * build, transitively. A ref never built is refused whole: a taint is about data that exists.
 */
function createTaint(d: StepDraft, r: CreateTaintRequest): CommandDecision {
  const problem = taintRequestProblem(r);
  if (problem) return { ok: false, status: 400, error: problem };
  const never = r.partitions.filter((ref) => !d.state.partitions.get(ref)?.build_id && d.state.partitions.get(ref)?.status !== 'live');
  const producerOf = d.input.policy.producerOf;
  if (never.length > 0) {
    const named = someNamed(never.map((ref) => `'${ref}'${d.state.partitions.get(ref)?.status === 'building' ? ' (being built for the first time)' : ''}`));
    // "Want it" only of what a job could build: a ref no job produces is most likely mistyped.
    const unbuildable = producerOf ? never.filter((ref) => producerOf(ref) === undefined) : [];
    const next =
      unbuildable.length === never.length
        ? `no one job in platform.json produces ${never.length === 1 ? 'it' : 'them'} either: check the ${never.length === 1 ? 'ref' : 'refs'} (platform partitions list --prefix ...)`
        : `want ${never.length === 1 ? 'it' : 'them'} instead: platform build ${never.length === 1 ? never[0] : '<the refs, or a pattern>'}`;
    return { ok: false, status: 400, error: `Cannot taint ${named}: never built, so there is nothing to rebuild yet; ${next}.` };
  }
  // Tainted, it could never be made good again (no job rebuilds it), and what consumed it would stay stale for good.
  const orphans = producerOf ? r.partitions.filter((ref) => producerOf(ref) === undefined) : [];
  if (orphans.length > 0) {
    const named = someNamed(orphans.map((ref) => `'${ref}'`));
    return {
      ok: false,
      status: 400,
      error:
        `Cannot taint ${named}: no one job in platform.json produces ${orphans.length === 1 ? 'it' : 'them'} ` +
        `any more (none, or two), so nothing could rebuild ${orphans.length === 1 ? 'it' : 'them'}. Put back the job that made ${orphans.length === 1 ? 'it' : 'them'} first.`,
    };
  }
  const refs = [...new Set(r.partitions)];
  if (r.downstream) {
    const seen = new Set(refs);
    for (let i = 0; i < refs.length; i++) {
      for (const c of currentConsumers(d.state, d.state.partitions.get(refs[i]!)?.build_id ?? '')) {
        if (!seen.has(c)) {
          seen.add(c);
          refs.push(c);
        }
      }
    }
  }
  // A partition being built keeps building (that build replaces the tainted one), but its current build is
  // tainted all the same: should the run fail, what consumed it stays stale.
  const taint_id = `t-${d.state.created.taints + 1}`;
  d.emit({ type: 'taint_created', taint_created: { taint_id, partitions: refs, reason: r.reason, downstream: r.downstream } });
  return { ok: true, status: 201, want_id: '', taint: { taint_id, partitions: refs, partitions_total: refs.length } };
}
