/**
 * Validates an OpenAPI document with @seriousme/openapi-schema-validator (the JSON Schemas
 * the OpenAPI Initiative publishes for 2.0 to 3.2). The package is ESM only and jest loads
 * CommonJS, so it runs in a child `node` with the document on stdin.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');

const SCRIPT = `
import { Validator } from '@seriousme/openapi-schema-validator';
let text = '';
for await (const chunk of process.stdin) text += chunk;
const validator = new Validator();
const result = await validator.validate(JSON.parse(text));
process.stdout.write(JSON.stringify({
  valid: result.valid,
  version: result.valid ? validator.version : null,
  supported: [...Validator.supportedVersions],
  errors: result.errors ?? null,
}));
`;

export interface OpenApiValidation {
  valid: boolean;
  /** Major.minor of the schema it matched, e.g. "3.1". */
  version: string | null;
  supported: string[];
  errors: unknown;
}

export function validateOpenApi(doc: unknown): Promise<OpenApiValidation> {
  return new Promise((resolve, reject) => {
    const child = execFile(process.execPath, ['--input-type=module', '-e', SCRIPT], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024, timeout: 60_000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`openapi validator failed: ${err.message}\n${stderr}`));
      resolve(JSON.parse(stdout) as OpenApiValidation);
    });
    child.stdin!.end(JSON.stringify(doc));
  });
}
