/** Builds a parameterised WHERE clause: `add('col = ?', v)` numbers the placeholders in order. Shared by every store. */
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
