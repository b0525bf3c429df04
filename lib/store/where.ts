/** Builds a parameterised WHERE clause: `add('col = ?', v)` numbers the placeholders in order. Shared by every store. */
import type { AgentBounds } from '../domain/agent-bounds';
export class Where {
  readonly params: unknown[] = [];
  private readonly parts: string[] = [];

  /** Adds one condition; each `?` becomes the next `$n`, bound to the next value. */
  add(sql: string, ...values: unknown[]): void {
    let s = sql;
    for (const v of values) {
      this.params.push(v);
      s = s.replace('?', `$${this.params.length}`);
    }
    this.parts.push(s);
  }

  /** A placeholder for a value used outside the conditions (LIMIT, OFFSET). */
  param(v: unknown): string {
    this.params.push(v);
    return `$${this.params.length}`;
  }

  get sql(): string {
    return this.parts.length ? 'WHERE ' + this.parts.join(' AND ') : '';
  }
}

/** A LIKE pattern matching `prefix` literally at the start (LIKE's own `%`, `_` and `\` escaped). */
const likePrefix = (prefix: string) => `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * The SQL condition "the owner in `column` is within these agent bounds" (lib/domain/agent-bounds.ts),
 * added to `w`; nothing for unbound. A NULL owner matches neither array: unowned rows are out of bounds.
 */
export function addBoundsCondition(w: Where, column: string, bounds: AgentBounds | undefined): void {
  if (bounds) w.add(boundsCondition(w, column, bounds));
}

/** The condition itself, its values bound as parameters of `w` (for use inside a subquery). */
export function boundsCondition(w: Where, column: string, bounds: AgentBounds): string {
  return `(${column} = ANY(${w.param([...bounds.exact])}::text[]) OR ${column} LIKE ANY(${w.param(bounds.prefixes.map(likePrefix))}::text[]))`;
}
