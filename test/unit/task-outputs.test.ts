/** The pure rules of lib/domain/tasks/outputs.ts: file-name templates, run keys, the digest's summary text. */
import { digestSummary, fileNameProblem, fileNameVariables, renderFileName, runKey, type DigestItem } from '../../lib/domain/tasks/outputs';
import type { TaskDefinition } from '../../lib/domain/tasks';

test('run keys are the run id after run/<task_id>/, made file-safe', () => {
  expect(runKey('run/daily/2026-03-09T09:00:00.000Z', 'daily')).toBe('2026-03-09T09-00-00.000Z');
  expect(runKey('run/daily/manual/2026-03-09T09:00:00.000Z', 'daily')).toBe('manual-2026-03-09T09-00-00.000Z');
});

test('file-name variables come from the nominal time in the trigger zone, not the clock', () => {
  const task = { task_id: 'daily', trigger: { type: 'cron', expression: '0 1 * * *', timezone: 'Asia/Shanghai', dom_dow: 'or', tolerant: true } } as TaskDefinition;
  // 2026-03-08T17:30Z is 01:30 on 9 March in Shanghai.
  const vars = fileNameVariables(task, 'run/daily/2026-03-08T17:30:00.000Z', Date.parse('2026-03-08T17:30:00Z'));
  expect(vars).toEqual({ task_id: 'daily', date: '2026-03-09', time: '013000', run_key: '2026-03-08T17-30-00.000Z' });
  expect(renderFileName('digest-{{date}}-{{ time }}.md', vars)).toBe('digest-2026-03-09-013000.md');
});

test.each(['../x.md', '/x.md', 'a/b.md', 'a\\b.md', '%2e%2e%2fx', '.x.md', '..', '', 'x y.md', '{{nope}}.md', '{{date}}/{{task_id}}.md'])('refuses the file-name template %j', (t) => {
  expect(fileNameProblem(t)).not.toBeNull();
});

test.each(['{{task_id}}-{{run_key}}.md', 'digest-{{date}}.json', 'report.md'])('accepts the file-name template %j', (t) => {
  expect(fileNameProblem(t)).toBeNull();
});

test('the digest summary counts every run, lists one line per task with its newest reason, in English and Chinese', () => {
  const items: DigestItem[] = [
    { run_id: 'run/a/2', task_id: 'a', status: 'failed', scheduled_at: '2026-03-09T09:00:00.000Z', reason: 'failed after 3 attempts: agent_error: HTTP 500' },
    { run_id: 'run/a/1', task_id: 'a', status: 'failed', scheduled_at: '2026-03-09T08:00:00.000Z', reason: 'older' },
    { run_id: 'run/b/1', task_id: 'b', status: 'failed', scheduled_at: '2026-03-09T07:00:00.000Z', reason: null },
  ];
  const since = Date.parse('2026-03-09T00:00:00Z');
  expect(digestSummary(items, 5, since, 'en')).toBe(
    [
      '5 runs needing attention since 2026-03-09T00:00:00.000Z, in 2 tasks (2 more not listed):',
      '- a: 2 runs, newest 2026-03-09T09:00:00.000Z: failed after 3 attempts: agent_error: HTTP 500',
      '- b: 1 run, newest 2026-03-09T07:00:00.000Z: no reason recorded',
    ].join('\n'),
  );
  expect(digestSummary(items, 3, since, 'zh')).toMatch(/^自 2026-03-09T00:00:00.000Z 以来有 3 次运行需要处理，涉及 2 个任务：\n- a：2 次/);
  expect(digestSummary([], 0, since, 'en')).toBe('No runs needing attention since 2026-03-09T00:00:00.000Z.');
});
