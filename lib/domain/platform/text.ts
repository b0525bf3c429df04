/**
 * Text measures every capability's rules share (a session's content, an intent's data):
 * shared sandbox-safe mechanics (issue 21), so one capability's rules need not import
 * another's. No dependencies: workflow validators run these in Temporal's sandbox.
 */

/** UTF-8 length without TextEncoder, which the workflow sandbox need not provide. */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/** True when a string or key anywhere in a JSON value holds U+0000. */
export function containsNul(v: unknown): boolean {
  if (typeof v === 'string') return v.includes('\u0000');
  if (Array.isArray(v)) return v.some(containsNul);
  if (v && typeof v === 'object') return Object.entries(v).some(([k, x]) => k.includes('\u0000') || containsNul(x));
  return false;
}
