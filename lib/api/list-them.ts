/**
 * What a 404 of an id adds, as other resources' do: where the ids that exist are listed, in the CLI and the API.
 * The dashboard shows the same words.
 */
export const LIST_WANTS = 'List them: platform want list (GET /api/wants).';
export const LIST_JOB_RUNS = 'List them: platform job-runs list (GET /api/job_runs).';
