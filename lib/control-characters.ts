/**
 * The characters no partition ref or job label may hold: the C0 controls, DEL and the C1 controls. A terminal acts
 * on a C1 control as on any other (NEL ends the line, CSI starts an escape sequence), so a ref holding one would
 * rewrite what `platform` prints wherever the ref is shown.
 */

/** The ranges as regular-expression source, for a character class (`[...]`, `[^...]`); one source for all checks. */
export const CONTROL_RANGES_SOURCE = '\\u0000-\\u001f\\u007f-\\u009f';

export const CONTROL_CHARACTER = new RegExp(`[${CONTROL_RANGES_SOURCE}]`);

/** The ranges as a message names them. */
export const CONTROL_RANGES = 'U+0000-U+001F, U+007F-U+009F';

/**
 * The bidirectional controls (the Arabic letter mark, LRM and RLM, the embeddings and overrides, the isolates): a ref
 * holding one is shown in another order than it is (`raw/\u202egnp.exe` reads as `raw/exe.png`), in the terminal and
 * the dashboard alike, so refs hold none (found by QA, session 32). Logs may: right-to-left text needs them.
 */
export const BIDI_RANGES_SOURCE = '\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069';

export const BIDI_CONTROL = new RegExp(`[${BIDI_RANGES_SOURCE}]`);

export const BIDI_RANGES = 'U+061C, U+200E-U+200F, U+202A-U+202E, U+2066-U+2069';

const ESCAPED = new RegExp(`[\u007f-\u009f${BIDI_RANGES_SOURCE}]`, 'g');

/** `text` as a JSON string, DEL, C1 and bidirectional controls escaped too: JSON.stringify escapes only those below U+0020. */
export function quoted(text: string): string {
  return escapeControls(JSON.stringify(text));
}

/** JSON text with DEL, the C1 controls and the bidirectional ones written as `\u` escapes (still the same JSON), safe to print. */
export function escapeControls(json: string): string {
  return json.replace(ESCAPED, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
