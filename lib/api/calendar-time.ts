/**
 * What is wrong with the date and time of day an ISO 8601 text names, if anything ('' when nothing): `Date.parse`
 * reads "2026-02-30" as March 2 and "T24:00" as the next day, so a time no calendar has would be kept as another.
 * Only the fields a text has are checked; one without a date at its start is left to `Date.parse`.
 */
export function calendarMisfit(text: string): string {
  const m = /^([+-]\d{6}|\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?/.exec(text);
  if (!m) return '';
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (month < 1 || month > 12) return `there is no month ${m[2]}`;
  // Day 0 of the next month is this month's last (UTC, so no zone moves it).
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day < 1 || day > days) return `${MONTHS[month - 1]} ${year} has ${days} days, not ${day}`;
  if (m[4] !== undefined && Number(m[4]) > 23) return `an hour is 00 to 23, not ${m[4]}`;
  if (m[5] !== undefined && Number(m[5]) > 59) return `a minute is 00 to 59, not ${m[5]}`;
  if (m[6] !== undefined && Number(m[6]) > 59) return `a second is 00 to 59, not ${m[6]}`;
  return '';
}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
