/** Sealing task secrets (lib/task-secrets.ts) and the key they are sealed under (lib/secrets-key.ts). */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseSecretsKey, SECRETS_KEY_FILE, taskSecretsOf } from '../../lib/secrets-key';
import { TASK_DEFAULTS, type TaskDefinition } from '../../lib/domain/tasks';
import { shownDefinition, TaskSecrets, withoutSecrets } from '../../lib/task-secrets';

const def = (over: Partial<TaskDefinition> = {}): TaskDefinition => ({
  ...TASK_DEFAULTS,
  task_id: 't1',
  name: 't1',
  trigger: { type: 'interval', every_s: 60, mode: 'from_last_start' },
  agent: { type: 'webhook', url: 'https://a.example', prompt_template: 'go', secret: 'agent-secret' },
  delivery: [{ type: 'webhook', url: 'https://d.example', format: 'json', secret: 'delivery-secret' }, { type: 'table' }],
  alert: { url: 'https://alert.example', secret: 'alert-secret' },
  tags: [],
  ...over,
});

test('seal and open: AES-256-GCM, a fresh IV each time, bound to the task id and the key', () => {
  const s = TaskSecrets.ephemeral();
  const a = s.seal('hunter2-secret', 't1');
  expect(a).toMatch(/^sealed:v1:[A-Za-z0-9_-]+$/);
  expect(a).not.toContain('hunter2');
  expect(s.seal('hunter2-secret', 't1')).not.toBe(a);
  expect(s.open(a, 't1')).toBe('hunter2-secret');
  expect(() => s.open(a, 't2')).toThrow(/does not open/);
  expect(() => TaskSecrets.ephemeral().open(a, 't1')).toThrow(/does not open with this SECRETS_KEY/);
  // A value stored before sealing existed opens as it is.
  expect(s.open('legacy-plain-secret', 't1')).toBe('legacy-plain-secret');
});

test('forStorage seals every secret of the request, keeps a stored one the request omits, and drops it with its slot', () => {
  const s = TaskSecrets.ephemeral();
  const stored = s.forStorage(def());
  expect(JSON.stringify(stored)).not.toMatch(/agent-secret|delivery-secret|alert-secret/);
  expect(s.open((stored.agent as { secret: string }).secret, 't1')).toBe('agent-secret');
  // A request value that looks sealed is still the request's own text: sealed, not trusted.
  const sneaky = s.forStorage(def({ alert: { url: 'https://alert.example', secret: (stored.alert as { secret: string }).secret } }));
  expect(s.open(s.open(sneaky.alert!.secret!, 't1'), 't1')).toBe('alert-secret');
  // The PATCH flow: the request (merged without secrets) omits them; the stored ones stay.
  const next = s.forStorage(withoutSecrets(def({ name: 'renamed' })), stored);
  expect(next.agent).toEqual(stored.agent);
  expect(next.delivery[0]).toEqual(stored.delivery[0]);
  expect(next.alert).toEqual(stored.alert);
  // No alert, another agent type: their secrets go with them.
  const dropped = s.forStorage(withoutSecrets(def({ alert: undefined, agent: { type: 'digest', statuses: ['failed'], max_items: 5 } as never })), stored);
  expect(dropped.alert).toBeUndefined();
  expect(JSON.stringify(dropped.agent)).not.toContain('secret');
});

test('reads show secret_set instead of the secret, only where one is set', () => {
  const shown = shownDefinition(TaskSecrets.ephemeral().forStorage(def({ delivery: [{ type: 'webhook', url: 'https://d.example', format: 'json' }] })));
  expect(shown).toMatchObject({ agent: { secret_set: true }, alert: { secret_set: true } });
  expect(shown.delivery).toEqual([{ type: 'webhook', url: 'https://d.example', format: 'json' }]);
  expect(JSON.stringify(shown)).not.toContain('"secret"');
});

test('SECRETS_KEY: 32 bytes as hex or base64; otherwise a generated key file, the same for every process', () => {
  expect(parseSecretsKey('ab'.repeat(32))).toHaveLength(32);
  expect(parseSecretsKey(Buffer.alloc(32, 7).toString('base64'))).toHaveLength(32);
  expect(() => parseSecretsKey('short')).toThrow(/SECRETS_KEY must be 32 bytes/);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tk-key-'));
  try {
    const a = taskSecretsOf({ secretsKey: undefined, dataDir: dir });
    const b = taskSecretsOf({ secretsKey: undefined, dataDir: dir });
    expect(b.open(a.seal('x-secret', 't'), 't')).toBe('x-secret');
    expect(fs.statSync(path.join(dir, SECRETS_KEY_FILE)).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(dir)).toEqual([SECRETS_KEY_FILE]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
