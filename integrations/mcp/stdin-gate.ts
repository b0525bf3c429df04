/**
 * The input gate (api/input-gate.ts) in front of the MCP server's stdio: the SDK decodes each
 * line as UTF-8 with replacement and JSON.parse keeps the last of duplicate names, so a tool
 * argument could reach Timekeeper other than it was sent. Each newline-delimited message is
 * checked as bytes first; one that breaks a rule is answered here with a JSON-RPC error naming
 * the field and the rule (-32700 for bytes that are not UTF-8, with id null as JSON-RPC 2.0
 * says for a message that cannot be read; -32602 for a duplicate name, NUL or a lone surrogate,
 * with the request's id) and never reaches the server. Lines that are not JSON at all pass on:
 * the SDK answers those itself.
 */
import { Transform, type TransformCallback } from 'node:stream';
import { DomainError } from '../../lib/domain/errors';
import { parseJsonText, utf8ErrorOffset } from '../../api/input-gate';

export class McpStdinGate extends Transform {
  private pending = Buffer.alloc(0);

  /** `reply` writes one JSON-RPC message (a line) to the client. */
  constructor(private readonly reply: (message: object) => void) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.pending = Buffer.concat([this.pending, chunk]);
    for (let nl = this.pending.indexOf(0x0a); nl >= 0; nl = this.pending.indexOf(0x0a)) {
      const line = this.pending.subarray(0, nl + 1);
      this.pending = this.pending.subarray(nl + 1);
      if (this.admit(line)) this.push(line);
    }
    done();
  }

  override _flush(done: TransformCallback): void {
    if (this.pending.length && this.admit(this.pending)) this.push(this.pending);
    done();
  }

  /** Whether the line may go on to the server; otherwise it has been answered. */
  private admit(line: Buffer): boolean {
    const bad = utf8ErrorOffset(line);
    if (bad >= 0) {
      this.reply({ jsonrpc: '2.0', id: null, error: { code: -32700, message: `Parse error: the message is not valid UTF-8 (byte 0x${line[bad].toString(16).padStart(2, '0')} at offset ${bad}); send UTF-8` } });
      return false;
    }
    const text = line.toString('utf8');
    let id: unknown = null;
    try {
      id = (JSON.parse(text) as { id?: unknown }).id ?? null;
    } catch {
      return true;
    }
    try {
      parseJsonText(text);
      return true;
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      const e = err.errors[0];
      this.reply({ jsonrpc: '2.0', id, error: { code: -32602, message: `Invalid params: ${e.field} ${e.reason}`, data: { field: e.field, reason: e.reason } } });
      return false;
    }
  }
}
