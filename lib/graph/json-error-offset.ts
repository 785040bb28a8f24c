/**
 * Where JSON text stops being JSON: the offset of the first character a parser cannot take (the text's length when it
 * ends too soon). V8's JSON.parse says "at position N" for some errors and only quotes the text around others
 * (`Unexpected token '}', "{"jobs": [}" is not valid JSON`), so a user of platform.json got no line to look at.
 * Called only once JSON.parse has failed: it walks the text as a parser would, without building anything.
 */
export function jsonErrorOffset(text: string): number {
  let i = 0;
  const fail = (): never => {
    throw new Stop(i);
  };
  const space = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const literal = (word: string) => {
    for (const c of word) {
      if (text[i] !== c) fail();
      i++;
    }
  };
  const string = () => {
    i++; // the opening quote
    while (i < text.length) {
      const c = text[i]!;
      if (c === '"') {
        i++;
        return;
      }
      if (c < ' ') fail();
      if (c === '\\') {
        i++;
        const e = text[i];
        if (e === 'u') {
          for (let k = 1; k <= 4; k++) {
            if (!/[0-9a-fA-F]/.test(text[i + k] ?? '')) {
              i += k;
              fail();
            }
          }
          i += 5;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i++;
        else fail();
      } else i++;
    }
    fail();
  };
  const number = () => {
    const digits = (leadingZero: boolean) => {
      const start = i;
      if (leadingZero && text[i] === '0') return void i++;
      while (i < text.length && text[i]! >= '0' && text[i]! <= '9') i++;
      if (i === start) fail();
    };
    if (text[i] === '-') i++;
    digits(true);
    if (text[i] === '.') {
      i++;
      digits(false);
    }
    if (text[i] === 'e' || text[i] === 'E') {
      i++;
      if (text[i] === '+' || text[i] === '-') i++;
      digits(false);
    }
  };
  // An object's or an array's items, up to `close`.
  const items = (close: string, item: () => void) => {
    i++;
    space();
    if (text[i] === close) return void i++;
    for (;;) {
      item();
      space();
      if (text[i] === ',') i++;
      else if (text[i] === close) return void i++;
      else fail();
    }
  };
  const member = () => {
    space();
    if (text[i] !== '"') fail();
    string();
    space();
    if (text[i] !== ':') fail();
    i++;
    value();
  };
  const value = (): void => {
    space();
    const c = text[i];
    if (c === '{') return items('}', member);
    if (c === '[') return items(']', value);
    if (c === '"') return string();
    if (c === 't') return literal('true');
    if (c === 'f') return literal('false');
    if (c === 'n') return literal('null');
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return number();
    fail();
  };
  try {
    value();
    space();
    if (i < text.length) fail();
  } catch (err) {
    if (err instanceof Stop) return Math.min(err.offset, text.length);
    // Nesting deeper than the stack (a file of 20,000 '['): such text ends unclosed, or V8 named the place.
    if (err instanceof RangeError) return text.length;
    throw err;
  }
  // JSON.parse failed on text this walk takes: no better place to point at than its end.
  return text.length;
}

class Stop {
  constructor(readonly offset: number) {}
}
