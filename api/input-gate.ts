/**
 * The input gate for JSON: every JSON body (/v1, OML /api, tasks, signals), and JSON text in a
 * seed parameter, passes here before any route sees it. A body is refused with 400 naming the
 * field and the rule when
 *
 *   - its bytes are not UTF-8 (the standard parser would store U+FFFD instead of what was sent);
 *   - it is not JSON, or its top level is not an object or an array;
 *   - an object has the same member name twice (JSON.parse keeps the last one silently; RFC 8785,
 *     the hash rule, needs I-JSON, RFC 7493, which forbids it);
 *   - a string or member name holds U+0000 or a lone surrogate (lib/domain/input-gate.ts).
 *
 * Hand-written on purpose, in two small steps: JSON.parse (native, the same parser as before)
 * builds the value, then `scanJson` walks the text that JSON.parse has just accepted, so it has
 * to find member names and string spans only, never to report a syntax error. The maintained
 * options do not fit: secure-json-parse only guards `__proto__`/`constructor`, and a full
 * streaming tokenizer (@streamparser/json, jsonc-parser) would be a second parser whose leniency
 * (comments, trailing commas) and numbers we would have to configure away. The scan is
 * iterative (no recursion), so depth costs no stack; depth and size limits stay where they were
 * (the body limit here, canonical JSON's depth in the content rules).
 */
import { isUtf8 } from 'node:buffer';
import type { RequestHandler } from 'express';
import express from 'express';
import { DomainError, type FieldError } from '../lib/domain/errors';
import { childPath, hostileTextProblem } from '../lib/domain/input-gate';

export const JSON_TYPES = ['application/json', 'application/*+json'];

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });
const LENIENT_UTF8 = new TextDecoder('utf-8');

/** Offset of the first byte that starts an invalid UTF-8 sequence (Unicode Table 3-7), or -1. */
export function utf8ErrorOffset(b: Uint8Array): number {
  if (isUtf8(b)) return -1;
  for (let i = 0; i < b.length; ) {
    const c = b[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) need = 1;
    else if (c >= 0xe0 && c <= 0xef) {
      need = 2;
      if (c === 0xe0) lo = 0xa0; // no overlong 3-byte forms
      if (c === 0xed) hi = 0x9f; // no UTF-8-encoded surrogates
    } else if (c >= 0xf0 && c <= 0xf4) {
      need = 3;
      if (c === 0xf0) lo = 0x90; // no overlong 4-byte forms
      if (c === 0xf4) hi = 0x8f; // nothing above U+10FFFF
    } else return i;
    for (let k = 1; k <= need; k++) {
      const d = b[i + k];
      if (d === undefined || d < (k === 1 ? lo : 0x80) || d > (k === 1 ? hi : 0xbf)) return i;
    }
    i += need + 1;
  }
  return -1;
}

interface Frame {
  path: string;
  object: boolean;
  names: Set<string>;
  index: number;
}

/**
 * Walks JSON text that JSON.parse accepted: the first duplicate member name (as a field error),
 * and the path of the string that spans character offset `target` (where a bad byte was).
 */
export function scanJson(text: string, root = '', target = -1): { duplicate?: FieldError; at?: string } {
  let i = 0;
  let at: string | undefined;
  const frames: Frame[] = [];
  const ws = () => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  const skipString = () => {
    const start = i++;
    while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
    return start;
  };
  /** Reads `"name":` of the next member; the path of its value, or a duplicate. */
  const member = (f: Frame): string | FieldError => {
    ws();
    const start = skipString();
    const name = JSON.parse(text.slice(start, i)) as string;
    const path = childPath(f.path, name);
    if (target >= start && target < i) at ??= path;
    if (f.names.has(name)) return { field: path, reason: 'is given twice in one object; member names must be unique (I-JSON, RFC 7493: the canonical JSON that is hashed needs it)' };
    f.names.add(name);
    ws();
    i++; // ':'
    return path;
  };

  let path = root;
  for (;;) {
    ws();
    const c = text[i];
    let opened = false;
    if (c === '{' || c === '[') {
      i++;
      const f: Frame = { path, object: c === '{', names: new Set(), index: 0 };
      ws();
      if (text[i] === (f.object ? '}' : ']')) i++;
      else {
        frames.push(f);
        opened = true;
        if (f.object) {
          const m = member(f);
          if (typeof m !== 'string') return { duplicate: m, at };
          path = m;
        } else path = childPath(f.path, 0);
      }
    } else if (c === '"') {
      const start = skipString();
      if (target >= start && target < i) at ??= path;
    } else {
      while (i < text.length && !',]} \t\n\r'.includes(text[i])) i++;
    }
    if (opened) continue;
    // After a value: close finished containers, or go on to the next member or element.
    for (;;) {
      const f = frames[frames.length - 1];
      if (!f) return { at };
      ws();
      const sep = text[i++];
      if (sep !== ',') {
        frames.pop();
        continue;
      }
      if (f.object) {
        const m = member(f);
        if (typeof m !== 'string') return { duplicate: m, at };
        path = m;
      } else path = childPath(f.path, ++f.index);
      break;
    }
  }
}

const refuse = (e: FieldError) => DomainError.validation(e.field, e.reason);

/**
 * JSON text (a decoded body, or a seed parameter) → its value, checked by every rule above.
 * `root` names the field the text is (a seed `content`), '' for a whole body.
 */
export function parseJsonText(text: string, root = ''): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw DomainError.validation(root || 'body', `is not valid JSON: ${(err as Error).message}`);
  }
  const { duplicate } = scanJson(text, root);
  if (duplicate) throw refuse(duplicate);
  const hostile = hostileTextProblem(value, root);
  if (hostile) throw refuse(hostile);
  return value;
}

/** A JSON body's bytes → its value; invalid UTF-8 is refused naming the field whose string holds it. */
export function parseJsonBytes(buf: Buffer): unknown {
  const bad = utf8ErrorOffset(buf);
  if (bad >= 0) {
    const byte = `0x${buf[bad].toString(16).padStart(2, '0')}`;
    const lenient = LENIENT_UTF8.decode(buf);
    let field = 'body';
    try {
      JSON.parse(lenient);
      field = scanJson(lenient, '', LENIENT_UTF8.decode(buf.subarray(0, bad)).length).at ?? 'body';
    } catch {
      // Not JSON even with the bad bytes replaced: the body as a whole is refused.
    }
    throw DomainError.validation(field, `is not valid UTF-8 (byte ${byte} at offset ${bad} of the body); text must be sent as UTF-8`);
  }
  const text = STRICT_UTF8.decode(buf); // also drops a leading byte order mark, as the standard parser did
  if (!/^\s*[{[]/.test(text)) {
    if (text.trim() === '') return {};
    throw DomainError.validation('body', 'must be a JSON object or array');
  }
  return parseJsonText(text);
}

/**
 * The JSON body parser of the API: the raw bytes (at most `limit`), then parseJsonBytes.
 * Replaces express.json, which decodes invalid UTF-8 to U+FFFD and keeps the last of duplicate names.
 */
export function jsonBodyGate(limit: number): RequestHandler[] {
  return [
    express.raw({ limit, type: JSON_TYPES }),
    (req, _res, next) => {
      if (!Buffer.isBuffer(req.body)) return next();
      const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(req.headers['content-type'] ?? '')?.[1];
      if (charset && !/^utf-?8$/i.test(charset)) return next(DomainError.validation('content-type', `has charset ${charset}; JSON must be sent as UTF-8`));
      try {
        req.body = parseJsonBytes(req.body);
        next();
      } catch (err) {
        next(err);
      }
    },
  ];
}
