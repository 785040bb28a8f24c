/**
 * platform.json refused by the daemon (`/api/status`'s `graph_problem`), in the words of `platform status` and of
 * `platform schedules`: what is wrong, and that the daemon goes on with the last valid graph meanwhile.
 */
export function graphRefused(problem: string): string {
  return `platform.json is refused, the daemon goes on with the last valid graph until it is fixed: ${problem}`;
}
