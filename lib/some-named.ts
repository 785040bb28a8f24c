/**
 * A message's list of what it is about, bounded: the first `named` items, then how many more (`a, b, c and 1,204
 * more`), so that a request of 100,000 refs is not answered with all of them.
 */
import { groupDigits } from './group-digits.js';

export function someNamed<T = string>(items: readonly T[], named = 5, show: (item: T) => string = String): string {
  const shown = (items.length <= named ? items : items.slice(0, named)).map(show).join(', ');
  return items.length <= named ? shown : `${shown} and ${groupDigits(items.length - named)} more`;
}
