/**
 * A message's list of what it is about, bounded: the first `named` items, then how many more (`a, b, c and 1,204
 * more`), so that a request of 100,000 refs is not answered with all of them.
 */
import { groupDigits } from './group-digits.js';

export function someNamed(items: readonly string[], named = 5): string {
  return items.length <= named ? items.join(', ') : `${items.slice(0, named).join(', ')} and ${groupDigits(items.length - named)} more`;
}
