/**
 * Why an id of ours is not found: never made, or made and pruned with the history a compaction let go. Ids are
 * `<prefix><n>` numbered from the `created` counters, so an id numbered within the counter existed.
 */
export function notFoundReason(id: string, prefix: string, created: number): string {
  const m = new RegExp(`^${prefix}(\\d+)$`).exec(id);
  // `w-007` was never made, whatever its number: ids are written without leading zeros.
  if (m && String(Number(m[1])) === m[1] && Number(m[1]) >= 1 && Number(m[1]) <= created) {
    return ': it ended before the oldest event the log keeps and was pruned with it (retention.events_keep in platform.json)';
  }
  return '';
}
