/** The job run an event is about: one function for the orchestrator's events and the API's views of them alike. */
const RUN_EVENT_TYPES: ReadonlySet<string> = new Set([
  'job_run_queued',
  'job_run_started',
  'job_run_placed',
  'job_run_succeeded',
  'job_run_failed',
  'job_run_canceled',
  'job_run_dep_missed',
]);

/** The `job_run_id` of a `job_run_*` event (a payload or its view); undefined for any other event. */
export function jobRunIdOf(event: { readonly type: string }): string | undefined {
  if (!RUN_EVENT_TYPES.has(event.type)) return undefined;
  // Every job_run_* payload sits under its type's name and names its run.
  return (event as unknown as Readonly<Record<string, { readonly job_run_id?: string } | undefined>>)[event.type]?.job_run_id;
}
