/**
 * The planner's view of a platform on virtual time: what a step would do at `now` with the given commands and no
 * other news, over the platform's current state and graph. Lets a test show exactly that nothing is due (no retry,
 * no run, no kill) at any future moment, instead of sleeping and hoping the loop would have acted by then.
 */
import { WorkspaceGraph } from '../../lib/graph/workspace-graph.js';
import type { Command } from '../../lib/orchestrator/command.js';
import { GraphTaskSource } from '../../lib/orchestrator/graph-task-source.js';
import { planStep, refsToResolve, type StepPlan } from '../../lib/orchestrator/plan-step.js';
import type { Platform } from '../../lib/platform.js';

export async function planAt(platform: Platform, now: number, commands: Command[] = []): Promise<StepPlan> {
  const tasks = new GraphTaskSource(await WorkspaceGraph.open(platform.workspaceRoot, platform.resolver.graph));
  const state = platform.state();
  const newRefs = commands.flatMap((c) => (c.kind === 'create_want' ? c.request.partitions : []));
  return planStep({
    state,
    now,
    commands,
    started: [],
    outcomes: [],
    launched: new Set(),
    tasks: await tasks.resolve(refsToResolve(state, newRefs)),
    policy: tasks.policy,
  });
}

/** An hour from now: past every retry backoff (60 s at most) and any ttl a test sets. */
export const LATER = (): number => Date.now() + 3_600_000;
