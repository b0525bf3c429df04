/** The production image must contain every source folder the type check compiles (a moved module must not vanish from it). */
import fs from 'node:fs';
import path from 'node:path';

const root = path.join(__dirname, '..', '..');

test('the Dockerfile copies every source folder of tsconfig.json, and the schema', () => {
  const tsconfig = JSON.parse(fs.readFileSync(path.join(root, 'tsconfig.json'), 'utf8')) as { include: string[] };
  const dockerfile = fs.readFileSync(path.join(root, 'Dockerfile'), 'utf8');
  const copied = new Set([...dockerfile.matchAll(/^COPY\s+(\S+)\s+\.\/(\S+)\s*$/gm)].map((m) => m[1]));
  const needed = [...tsconfig.include.filter((d) => !['test', 'bench'].includes(d)), 'schema'];
  // A folder is in the image when it or a folder above it is copied.
  expect(needed.filter((d) => ![...copied].some((c) => d === c || d.startsWith(c + '/')))).toEqual([]);
  // And nothing copied that is not there.
  expect([...copied].filter((d) => !fs.existsSync(path.join(root, d)))).toEqual([]);
});
