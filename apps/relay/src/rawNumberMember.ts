/**
 * The JSON text of member `key` of the object in `json`, when its value is a number: exactly as
 * the client wrote it (`1.50`, `18446744073709551616`, `1e3`), which a parse and re-serialize
 * would change (to `1.5`, `18446744073709552000`, `1000`). The last occurrence counts, as with
 * JSON.parse. Null when `json` is not an object, or the member is absent or not a number.
 * Only called on frames that already parsed, so malformed text just yields null.
 */
export function rawNumberMember(json: string, key: string): string | null {
  let i = skipSpace(json, 0);
  if (json[i] !== '{') return null;
  let found: string | null = null;
  i = skipSpace(json, i + 1);
  if (json[i] === '}') return null;
  for (;;) {
    const keyEnd = stringEnd(json, i);
    if (keyEnd < 0) return null;
    const name: unknown = JSON.parse(json.slice(i, keyEnd));
    i = skipSpace(json, keyEnd);
    if (json[i] !== ':') return null;
    i = skipSpace(json, i + 1);
    const valueEnd = valueEndAt(json, i);
    if (valueEnd < 0) return null;
    if (name === key) found = NUMBER.test(json.slice(i, valueEnd)) ? json.slice(i, valueEnd) : null;
    i = skipSpace(json, valueEnd);
    if (json[i] === '}') return found;
    if (json[i] !== ',') return null;
    i = skipSpace(json, i + 1);
  }
}

const NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;

function skipSpace(s: string, i: number): number {
  while (i < s.length && (s[i] === ' ' || s[i] === '\t' || s[i] === '\n' || s[i] === '\r')) i++;
  return i;
}

/** Index just past the string literal starting at `i`, or -1. */
function stringEnd(s: string, i: number): number {
  if (s[i] !== '"') return -1;
  for (let j = i + 1; j < s.length; j++) {
    if (s[j] === '\\') j++;
    else if (s[j] === '"') return j + 1;
  }
  return -1;
}

/** Index just past the JSON value starting at `i`, or -1. Nested values are skipped iteratively. */
function valueEndAt(s: string, i: number): number {
  const c = s[i];
  if (c === '"') return stringEnd(s, i);
  if (c !== '{' && c !== '[') {
    let j = i;
    while (j < s.length && !',}] \t\n\r'.includes(s[j] ?? '')) j++;
    return j > i ? j : -1;
  }
  let depth = 0;
  for (let j = i; j < s.length; j++) {
    const d = s[j];
    if (d === '"') {
      j = stringEnd(s, j) - 1;
      if (j < 0) return -1;
    } else if (d === '{' || d === '[') depth++;
    else if (d === '}' || d === ']') {
      depth--;
      if (depth === 0) return j + 1;
    }
  }
  return -1;
}
