/**
 * The web dashboard (api/dashboard/) in a real headless Chromium (Debian's `chromium`, driven
 * by playwright-core; never a downloaded browser) against the running test system: real
 * sessions, intents, tasks and workspace files, every page loaded, filters, buttons, the
 * pending banner, and the key prompt when keys are configured. Each page's screenshot is
 * saved to docs/screenshots/ (referenced from the README).
 *
 * Without /usr/bin/chromium the test fails: CI (.ci/run) installs the package.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { startTestSystem, TestSystem, eventually, runScopedId } from '../support';
import { asDatabaseAttacker } from '../support/db-attacker';
import { chatAnswer, fakeServer, FakeServer, protocolAnswer } from '../support/fake-services';
import { parseCheckpoint } from '../../lib/tlog/checkpoint';
import { generateCosignerKey } from '../../lib/tlog/cosignature';
import { noteVerifier, openNote } from '../../lib/tlog/note';
import { Witness, WitnessStateStore } from '../../lib/tlog/witness';
import { startWitnessServer, type WitnessServer } from '../../lib/tlog/witness-server';
import { parseWitnessList } from '../../lib/tlog/witnessing';
import { freePort, LOG_WAIT, sessionLogged } from '../support/tlog-e2e';

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = path.resolve(__dirname, '..', '..', 'docs', 'screenshots');
const VIEWPORT = { width: 1366, height: 860 };


/** A fresh browser profile in a temp folder, with nothing that reaches the network by itself. */
async function launch(): Promise<{ context: BrowserContext; close: () => Promise<void> }> {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does it)`);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'tk-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: VIEWPORT,
    timezoneId: 'Europe/Berlin',
    locale: 'en-GB',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  return {
    context,
    close: async () => {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Waits until a locator matches exactly `n` elements. */
const countIs = (loc: Locator, n: number) => eventually(async () => (await loc.count()) === n, { timeoutMs: 10_000, stepMs: 100 });

/** The `data-intent` ids of the intent table's rows, in page order. */
const intentRowIds = (page: Page) =>
  page.locator('#intents-table tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-intent') ?? ''));

/**
 * Waits until the intent table shows exactly these ids (in any order). A count alone can match the
 * page from before a filter was applied, and the rows are read while the next render replaces them.
 */
const intentRowsAre = (page: Page, ids: string[]) =>
  eventually(async () => JSON.stringify((await intentRowIds(page)).sort()) === JSON.stringify([...ids].sort()), { timeoutMs: 10_000, stepMs: 100 });

const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`) });

/** Page errors and failed requests to other origins (there must be none: every asset is local). */
function watch(page: Page, baseUrl: string): { errors: string[]; foreign: string[] } {
  const seen = { errors: [] as string[], foreign: [] as string[] };
  page.on('pageerror', (e) => seen.errors.push(e.message));
  page.on('request', (r) => {
    const u = r.url();
    if (!u.startsWith(baseUrl) && !u.startsWith('data:') && !u.startsWith('blob:')) seen.foreign.push(u);
  });
  return seen;
}

describe('the dashboard against the running system (open API)', () => {
  let sys: TestSystem;
  let llm: FakeServer;
  let browser: Awaited<ReturnType<typeof launch>>;
  let page: Page;
  let seen: ReturnType<typeof watch>;
  let workspace: string;
  const agent = runScopedId('dash-agent');
  const channel = runScopedId('web');
  const sessionA = runScopedId('dash-a');
  const sessionB = runScopedId('dash-b');
  const domain = runScopedId('mail');
  const taskId = runScopedId('digest');
  const tag = runScopedId('dash');

  beforeAll(async () => {
    workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'tk-workspace-'));
    fs.mkdirSync(path.join(workspace, 'ARTIFACTS'));
    fs.writeFileSync(path.join(workspace, 'STATE.md'), '# Agent state\n\n- **Focus**: the quarterly report\n- Waiting on: finance numbers\n\n<script>window.hacked = 1</script>\n');
    fs.writeFileSync(path.join(workspace, 'ARTIFACTS', 'report.md'), '# Weekly report\n\n| day | mails |\n| --- | --- |\n| Mon | 12 |\n');
    fs.writeFileSync(path.join(workspace, 'ARTIFACTS', 'numbers.csv'), 'day,mails\nMon,12\n');
    sys = await startTestSystem({
      config: { outboundAllowHosts: ['127.0.0.1'], stateMdPath: path.join(workspace, 'STATE.md'), artifactsDir: path.join(workspace, 'ARTIFACTS') },
      secrets: { LLM_API_KEY: 'sk-test-123' },
    });
    llm = await fakeServer((r) => {
      const messages: { content: string }[] = JSON.parse(r.body).messages;
      const id = /task_id is "([^"]+)"/.exec(messages[0].content)?.[1] ?? '?';
      // A prompt that says HANDOFF answers with a follow-up task for another agent run.
      const handoff = messages.some((m) => m.content.includes('HANDOFF'));
      const followUp = { type: 'follow_up', delay_s: 0, task: { name: 'deep analysis', agent: { type: 'openai', base_url: `${llm.url}/v1`, model: 'qwen2.5', api_key_env: 'LLM_API_KEY', prompt_template: 'dig deeper' } } };
      return { body: chatAnswer(protocolAnswer(id, { summary: handoff ? 'handed off' : 'digest sent: 3 topics', next_action: handoff ? followUp : null })) };
    });

    // Two sessions of one agent on one channel, one of another agent.
    await sys.tk.createSession({ session_id: sessionA, agent_id: agent, channel, metadata: { user: 'ada' } });
    await sys.tk.append(sessionA, { type: 'USER_INPUT', content: { input: 'What is on my calendar tomorrow?' } });
    await sys.tk.append(sessionA, { type: 'TOOL_CALL', content: { tool_name: 'calendar.list', params: { day: 'tomorrow', long: 'x'.repeat(400) } } });
    await sys.tk.append(sessionA, { type: 'TOOL_RESULT', content: { tool_name: 'calendar.list', result: ['09:00 stand-up', '14:00 review'] } });
    await sys.tk.append(sessionA, { type: 'LLM_RESPONSE', content: { response: 'Two meetings: stand-up at 9 and a review at 14.' } });
    await sys.tk.createSession({ session_id: sessionB, agent_id: runScopedId('other-agent'), channel });
    await sys.tk.append(sessionB, { type: 'USER_INPUT', content: { input: 'hello' } });

    // Intents: requested, in progress, done, blocked with its structured data.
    await sys.tk.intents.create({ event_id: runScopedId('I-1'), domain, action: 'send-daily-summary', tags: ['automation', 'user-john'], data: { recipient: 'john@example.com' } });
    await sys.tk.intents.create({ event_id: runScopedId('I-2'), domain, action: 'archive-inbox', tags: ['automation'] });
    await sys.tk.intents.transition(runScopedId('I-2'), { status: 'in-progress', note: 'archiving 120 mails' });
    await sys.tk.intents.create({ event_id: runScopedId('I-3'), domain, action: 'send-invoice', tags: ['billing'] });
    await sys.tk.intents.transition(runScopedId('I-3'), { status: 'in-progress' });
    await sys.tk.intents.transition(runScopedId('I-3'), { status: 'done', data: { message_id: 'm-1' } });
    await sys.tk.intents.create({ event_id: runScopedId('I-4'), domain, action: 'send-reminder', tags: ['automation'] });
    await sys.tk.intents.transition(runScopedId('I-4'), {
      status: 'blocked',
      note: 'Failed to connect to SMTP server',
      data: { error: 'Connection timeout after 10s', next_step: 'Retry in 5 minutes.', retry: false, retry_after: '2031-10-27T12:05:00Z' },
    });

    await sys.tk.call('createTask', {
      body: {
        task_id: taskId,
        name: 'Daily digest',
        tags: [tag],
        trigger: { type: 'cron', expression: '0 17 * * 1-5', timezone: 'Asia/Shanghai' },
        agent: { type: 'openai', base_url: `${llm.url}/v1`, model: 'qwen2.5', api_key_env: 'LLM_API_KEY', prompt_template: 'Summarise the day {{date}}' },
      },
    });

    browser = await launch();
    page = await browser.context.newPage();
    seen = watch(page, sys.baseUrl);
  });

  afterAll(async () => {
    await browser?.close();
    await llm?.close();
    await sys?.stop();
    if (workspace) fs.rmSync(workspace, { recursive: true, force: true });
  });

  afterEach(() => {
    expect(seen.errors).toEqual([]);
    expect(seen.foreign).toEqual([]);
  });

  test('the API serves the page and its assets itself, with a strict content security policy', async () => {
    const res = await fetch(`${sys.baseUrl}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await res.text();
    expect(html).toContain('/assets/app.js');
    expect(html).not.toMatch(/https?:\/\//);
    const js = await fetch(`${sys.baseUrl}/assets/app.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toMatch(/javascript/);
    expect((await fetch(`${sys.baseUrl}/assets/app.css`)).headers.get('content-type')).toMatch(/text\/css/);
  });

  test('sessions: the list filters by agent, channel and text; a session shows its timeline, verified chain, context and workflow link', async () => {
    await page.goto(`${sys.baseUrl}/#/sessions?channel=${channel}`);
    const rows = page.locator('#sessions-table tbody tr');
    await countIs(rows, 2);
    // Newest first: B was created after A.
    expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-session')))).toEqual([sessionB, sessionA]);
    await shot(page, 'sessions');

    // Filter by agent through the form.
    await page.fill('input[name=agent_id]', agent);
    await page.click('form.filters button[type=submit]');
    await countIs(rows, 1);
    expect(await rows.first().getAttribute('data-session')).toBe(sessionA);
    expect(page.url()).toContain(`agent_id=${agent}`);

    // Text on the page: no match, then a match.
    await page.fill('input[name=agent_id]', '');
    await page.fill('input[name=text]', 'no-such-thing');
    await page.click('form.filters button[type=submit]');
    await page.waitForSelector('.empty');
    await page.fill('input[name=text]', sessionB);
    await page.click('form.filters button[type=submit]');
    await countIs(rows, 1);
    expect(await rows.first().getAttribute('data-session')).toBe(sessionB);

    // One session.
    await page.goto(`${sys.baseUrl}/#/sessions/${sessionA}`);
    await page.waitForSelector('#timeline li');
    expect(await page.locator('#timeline li').count()).toBe(5);
    const first = page.locator('#timeline li[data-seq="3"]');
    expect(await first.locator('.badge').innerText()).toBe('TOOL_CALL');
    // Times in the viewer's zone and in UTC; a short hash; content folded until opened.
    expect(await first.locator('time .utc').innerText()).toMatch(/UTC$/);
    expect(await first.locator('.hash').innerText()).toMatch(/^[0-9a-f]{12}$/);
    expect(await first.locator('details pre').isVisible()).toBe(false);
    await first.locator('details summary').click();
    expect(await first.locator('details pre').isVisible()).toBe(true);
    expect(await first.locator('details pre').innerText()).toContain('"tool_name": "calendar.list"');

    await page.waitForSelector('#verify-badge');
    expect(await page.locator('#verify-badge').innerText()).toContain('chain verified: 5 events');
    // This system runs no log builder: the chain is in no checkpoint (the log badge says so).
    expect(await page.locator('#log-badge').getAttribute('data-state')).toBe('unlogged');
    expect(await page.locator('#log-badge').innerText()).toBe('not yet in a checkpoint');

    await page.locator('#timeline li[data-seq="2"] button').click();
    await page.waitForSelector('#context .context-text');
    expect(await page.locator('#ctx-title').innerText()).toBe('LLM context as of seq 2');
    expect(await page.locator('#context .context-text').innerText()).toContain('What is on my calendar tomorrow?');
    expect(await page.locator('#context .context-text').innerText()).not.toContain('Two meetings');

    const described = await sys.tk.session(sessionA);
    expect(await page.locator('#workflow-link').getAttribute('href')).toBe(described.workflow.ui_url);
    expect(described.workflow.ui_url).toContain('8233');
    await shot(page, 'session-timeline');
  });

  test('a broken chain shows its first broken link', async () => {
    const id = runScopedId('dash-broken');
    await sys.tk.createSession({ session_id: id, agent_id: agent, channel });
    await sys.tk.append(id, { type: 'USER_INPUT', content: { input: 'pay 10 EUR' } });
    await sys.tk.append(id, { type: 'LLM_RESPONSE', content: { response: 'paid' } });
    // Play a superuser: disable the append-only triggers, edit a stored event, put the triggers back.
    await asDatabaseAttacker(sys.ownerPool, 'timeline_events', async (c) => {
      await c.query(`UPDATE timeline_events SET content = '{"input":"pay 1000 EUR"}' WHERE session_id = $1 AND seq = 2`, [id]);
    });
    await page.goto(`${sys.baseUrl}/#/sessions/${id}`);
    await page.waitForSelector('#verify-badge');
    expect(await page.locator('#verify-badge').innerText()).toBe('✗ chain broken at seq 2');
    expect(await page.locator('#verify').innerText()).toContain('content_changed');
  });

  test('intents: the pending banner counts right and filters; the list filters by domain, status, tags and search; the detail shows blocked data and expiry', async () => {
    await page.goto(`${sys.baseUrl}/#/intents?domain=${domain}`);
    await page.waitForSelector('#intents-table');
    const banner = page.locator('#pending-banner');
    await banner.waitFor();
    const count = async () => Number(await banner.getAttribute('data-count'));
    expect(await count()).toBe((await sys.tk.intents.stats()).pending);
    expect(await page.locator('#intents-table tbody tr').count()).toBe(4);
    const lifecycle = page.locator(`#intents-table tr[data-intent="${runScopedId('I-3')}"] .lifecycle`);
    expect((await lifecycle.innerText()).replace(/\s+/g, ' ')).toBe('requested → in-progress → done');
    await shot(page, 'intents');

    // One more pending intent: the banner follows.
    const before = await count();
    await sys.tk.intents.create({ event_id: runScopedId('I-5'), domain, action: 'call-back', tags: ['phone'] });
    await page.click('#refresh');
    await eventually(async () => (await count()) === before + 1);
    expect(await banner.innerText()).toContain(`${before + 1} pending intents`);

    // The banner filters to the pending ones; with the domain, ours are I-1, I-2, I-5.
    await banner.click();
    await page.waitForSelector('#intents-count');
    expect(page.url()).toContain('pending=1');
    expect(await page.locator('#intents-count').innerText()).toBe(`${before + 1} pending`);
    await page.fill('input[name=domain]', domain);
    await page.click('form.filters button[type=submit]');
    await intentRowsAre(page, [runScopedId('I-1'), runScopedId('I-2'), runScopedId('I-5')]);
    expect(page.url()).toContain('pending=1');
    expect(page.url()).toContain(`domain=${domain}`);
    expect(await intentRowIds(page)).toEqual([runScopedId('I-1'), runScopedId('I-2'), runScopedId('I-5')]);

    // Filters: status, tags, search.
    await page.goto(`${sys.baseUrl}/#/intents?domain=${domain}`);
    await page.waitForSelector('#intents-table');
    await page.selectOption('select[name=status]', 'blocked');
    await page.click('form.filters button[type=submit]');
    await intentRowsAre(page, [runScopedId('I-4')]);
    await page.selectOption('select[name=status]', '');
    await page.fill('input[name=tags]', 'automation');
    await page.click('form.filters button[type=submit]');
    await intentRowsAre(page, [runScopedId('I-1'), runScopedId('I-2'), runScopedId('I-4')]);
    await page.fill('input[name=tags]', '');
    await page.fill('input[name=search]', 'SMTP');
    await page.click('form.filters button[type=submit]');
    await intentRowsAre(page, [runScopedId('I-4')]);

    // The blocked one in detail.
    await page.click(`a[href="#/intents/${runScopedId('I-4')}"]`);
    await page.waitForSelector('#transitions');
    expect(await page.locator('#transitions tbody tr').count()).toBe(2);
    const blocked = page.locator('#transitions tr[data-seq="2"] .blocked');
    expect(await blocked.innerText()).toContain('Connection timeout after 10s');
    expect(await blocked.innerText()).toContain('Retry in 5 minutes.');
    expect(await blocked.locator('time').getAttribute('datetime')).toBe('2031-10-27T12:05:00.000Z');
    expect(await page.locator('#lifecycle').innerText()).toBe('requested → blocked');
    await shot(page, 'intent-detail');

    // A pending one: its expiry is its workflow's expire timer.
    const detail = await sys.tk.intents.get(runScopedId('I-1'));
    await page.goto(`${sys.baseUrl}/#/intents/${runScopedId('I-1')}`);
    await page.waitForSelector('#expiry time');
    expect(detail.workflow.next?.action).toBe('expire');
    expect(await page.locator('#expiry time').getAttribute('datetime')).toBe(new Date(detail.workflow.next!.at).toISOString());
  });

  test('tasks: trigger in words and next fire; pause, resume and run now act; the run appears with its lateness and summary; cron preview', async () => {
    await page.goto(`${sys.baseUrl}/#/tasks?tag=${tag}`);
    const row = page.locator(`#tasks-table tr[data-task="${taskId}"]`);
    await row.waitFor();
    expect(await row.locator('td.trigger').innerText()).toBe('cron "0 17 * * 1-5" in Asia/Shanghai: at 17:00 on Monday to Friday');
    expect(await row.locator('time').first().getAttribute('datetime')).toMatch(/T09:00:00\.000Z$/);
    expect(await row.innerText()).toContain('never ran');

    await row.locator('button[data-action=pause]').click();
    await row.locator('.badge', { hasText: 'paused' }).waitFor();
    expect((await sys.tk.call('getTask', { params: { id: taskId } })).body.enabled).toBe(false);
    await row.locator('button[data-action=resume]').click();
    await row.locator('button[data-action=pause]').waitFor();
    expect((await sys.tk.call('getTask', { params: { id: taskId } })).body.enabled).toBe(true);
    await shot(page, 'tasks');

    await row.locator('button[data-action=trigger]').click();
    const runs = await eventually(async () => {
      const r = (await sys.tk.call('listTaskRuns', { params: { id: taskId } })).body.runs;
      return r.length && r[0].status === 'success' ? r : undefined;
    }, 30_000);
    await page.goto(`${sys.baseUrl}/#/tasks/${taskId}`);
    const run = page.locator(`#runs tr[data-run="${runs[0].run_id}"]`);
    await run.waitFor();
    expect(await run.getAttribute('data-status')).toBe('success');
    expect(await run.innerText()).toContain('digest sent: 3 topics');
    expect(await run.innerText()).toMatch(/\d+(\.\d)? (ms|s)/); // lateness and duration
    expect(await page.locator('#next-fires li').count()).toBe(5);
    await shot(page, 'task-detail');

    // Back on the list: the last run and its lateness; the needs-attention queue; the preview box.
    await page.goto(`${sys.baseUrl}/#/tasks?tag=${tag}`);
    await row.waitFor();
    expect(await row.innerText()).toContain('success');
    await page.locator('#needs-attention').waitFor();
    await page.fill('#preview-form input[name=cron]', '0 30 9 * * 1-5');
    await page.fill('#preview-form input[name=timezone]', 'Asia/Shanghai');
    await page.click('#preview-form button[type=submit]');
    await page.waitForSelector('#preview-out li');
    expect(await page.locator('#preview-out li').count()).toBe(5);
    expect(await page.locator('#preview-out li time').first().getAttribute('datetime')).toMatch(/T01:30:00\.000Z$/);
    await page.fill('#preview-form input[name=cron]', 'not a cron');
    await page.click('#preview-form button[type=submit]');
    await page.waitForSelector('#preview-out .error');
    await page.fill('#preview-form input[name=cron]', '0 30 9 * * 1-5');
    await page.click('#preview-form button[type=submit]');
    await page.waitForSelector('#preview-out li');
    await page.locator('#preview-out').scrollIntoViewIfNeeded();
    await shot(page, 'tasks-attention-preview');
  });

  test('a task made, changed and deleted through the form: the cron preview beside the expression, the API\'s field errors at their fields', async () => {
    const id = runScopedId('form-task');
    await page.goto(`${sys.baseUrl}/#/tasks?tag=${tag}`);
    await page.click('#new-task');
    await page.waitForSelector('#task-form');
    expect(page.url()).toContain('new=1');

    // The preview follows the expression as it is typed, in the zone beside it.
    await page.fill('#task-form input[name=timezone]', 'Asia/Shanghai');
    await page.fill('#task-form input[name=expression]', '0 30 9 * * 1-5');
    await eventually(async () => (await page.locator('#cron-preview li time').first().getAttribute('datetime').catch(() => null))?.endsWith('T01:30:00.000Z'));
    expect(await page.locator('#cron-preview li').count()).toBe(5);
    expect(await page.locator('#cron-preview .preview-words').innerText()).toMatch(/09:30/);
    await page.fill('#task-form input[name=expression]', '0 61 * * *');
    await page.waitForSelector('#cron-preview .error');
    expect(await page.locator('#cron-preview .error').innerText()).toMatch(/^expression /);

    // Two wrong fields: each error is shown at the field the API names; nothing is stored.
    await page.fill('#task-form input[name=task_id]', id);
    await page.fill('#task-form input[name=name]', 'Form task');
    await page.fill('#task-form input[name=tags]', tag);
    await page.fill('#task-form textarea[name=agent]', JSON.stringify({ type: 'openai', base_url: 'not a url', model: 'qwen2.5', api_key_env: 'LLM_API_KEY', prompt_template: 'Summarise {{date}}' }));
    await page.fill('#task-form textarea[name=delivery]', '[{"type": "table"}]');
    await page.click('#task-form button[type=submit]');
    const agentError = page.locator('#task-form [data-error-for="agent"] .msg');
    await agentError.waitFor();
    expect(await agentError.innerText()).toBe('base_url must be an http(s) URL');
    expect(await page.locator('#task-form textarea[name=agent]').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#task-form [data-error-for="trigger.expression"] .msg').innerText()).not.toBe('');
    expect(await page.locator('#task-form [data-error-for="name"] .msg').count()).toBe(0);
    expect((await sys.tk.raw('GET', `/v1/tasks/${id}`)).status).toBe(404);
    await page.locator('#task-form').scrollIntoViewIfNeeded();
    await shot(page, 'task-form-errors');

    // A JSON typo is caught at its field before anything is sent.
    await page.fill('#task-form textarea[name=delivery]', '[{"type": "table"');
    await page.click('#task-form button[type=submit]');
    await page.locator('#task-form [data-error-for="delivery"] .msg', { hasText: 'is not valid JSON' }).waitFor();

    await page.fill('#task-form input[name=expression]', '0 30 9 * * 1-5');
    await page.fill('#task-form textarea[name=agent]', JSON.stringify({ type: 'openai', base_url: `${llm.url}/v1`, model: 'qwen2.5', api_key_env: 'LLM_API_KEY', prompt_template: 'Summarise {{date}}' }));
    await page.fill('#task-form textarea[name=delivery]', '[{"type": "table"}]');
    await eventually(async () => (await page.locator('#cron-preview li').count()) === 5);
    await shot(page, 'task-form');
    await page.click('#task-form button[type=submit]');
    await page.waitForSelector('#trigger-text');
    expect(page.url()).toContain(`#/tasks/${id}`);
    const made = await sys.tk.tasks.get(id);
    expect(made).toMatchObject({ name: 'Form task', version: 1, enabled: true });
    expect(made.definition.trigger).toMatchObject({ type: 'cron', expression: '0 30 9 * * 1-5', timezone: 'Asia/Shanghai' });
    expect(made.definition.delivery).toEqual([{ type: 'table' }]);

    // Edit: the form shows the stored task; only what changed is sent.
    await page.click('#edit-task');
    await page.waitForSelector('#task-form');
    expect(await page.inputValue('#task-form input[name=expression]')).toBe('0 30 9 * * 1-5');
    expect(await page.inputValue('#task-form input[name=name]')).toBe('Form task');
    await page.fill('#task-form input[name=name]', 'Form task, renamed');
    await page.fill('#task-form input[name=expression]', '0 0 18 * * *');
    await page.click('#task-form button[type=submit]');
    await page.locator('#trigger-text', { hasText: '18:00' }).waitFor();
    const changed = await sys.tk.tasks.get(id);
    expect(changed).toMatchObject({ name: 'Form task, renamed', version: 2 });
    expect(changed.history.map((x) => x.action)).toEqual(['create', 'update']);
    expect(changed.definition.trigger).toMatchObject({ expression: '0 0 18 * * *', timezone: 'Asia/Shanghai' });
    expect(changed.definition.agent).toEqual(made.definition.agent);

    // Run now; the table delivery's row shows under Results.
    await page.locator('.toolbar button[data-action=trigger]').click();
    const run = await eventually(async () => (await sys.tk.tasks.runs(id)).runs.find((r) => r.status === 'success'), 30_000);
    await eventually(async () => (await sys.tk.tasks.results(id)).results.length === 1);
    await page.click('#refresh');
    const result = page.locator(`#results-table tr[data-run="${run.run_id}"]`);
    await result.waitFor();
    expect(await result.locator('td.summary').innerText()).toBe('digest sent: 3 topics');

    // Backfill: a range the wrong way round is refused at its field; the last two days run once each.
    const now = Date.now();
    const local = (ms: number) => page.evaluate((t) => {
      const d = new Date(t);
      const p = (n: number) => String(n).padStart(2, '0');
      return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
    }, ms);
    await page.fill('#backfill-form input[name=from]', await local(now - 60_000));
    await page.fill('#backfill-form input[name=to]', await local(now - 120_000));
    await page.click('#backfill-form button[type=submit]');
    expect(await page.locator('#backfill-form [data-error-for="from"] .msg').innerText()).toBe('must be before to');
    await page.fill('#backfill-form input[name=from]', await local(now - 2 * 86_400_000));
    await page.fill('#backfill-form input[name=to]', await local(now - 1000));
    await page.click('#backfill-form button[type=submit]');
    await page.waitForSelector('#backfill-summary');
    const started = await page.locator('#backfill-out li').count();
    expect(started).toBeGreaterThanOrEqual(1);
    expect(await page.locator('#backfill-summary').innerText()).toBe(`${started} started, 0 had already run.`);
    await eventually(async () => (await sys.tk.tasks.runs(id)).runs.filter((r) => r.trigger === 'backfill').length === started);
    await page.locator('#backfill-title').scrollIntoViewIfNeeded();
    await shot(page, 'task-backfill-results');

    // Delete asks first; then the task stays readable, deleted, with no edit or delete left.
    await page.click('button[data-action=delete]');
    await page.click('#delete-confirm');
    await page.locator('h1 .badge', { hasText: 'deleted' }).waitFor();
    expect((await sys.tk.tasks.get(id)).deleted).toBe(true);
    expect(await page.locator('#edit-task').count()).toBe(0);
  });

  test("follow-ups: a run's follow-up task is linked from the run, and the follow-up names its parent run", async () => {
    const id = runScopedId('handoff');
    await sys.tk.tasks.create({
      task_id: id,
      tags: [tag],
      trigger: { type: 'cron', expression: '0 3 * * *', timezone: 'UTC' },
      agent: { type: 'openai', base_url: `${llm.url}/v1`, model: 'qwen2.5', api_key_env: 'LLM_API_KEY', prompt_template: 'HANDOFF the hard part' },
    });
    const { run_id } = await sys.tk.tasks.trigger(id);
    const parent = await eventually(async () => {
      const r = await sys.tk.runs.get(run_id);
      return r.status === 'success' && r.follow_ups.length ? r : undefined;
    }, 30_000);
    const child = parent.follow_ups[0].task_id;
    await page.goto(`${sys.baseUrl}/#/tasks/${id}`);
    const link = page.locator(`#runs tr[data-run="${run_id}"] td.follow-ups a`);
    await link.waitFor();
    expect(await link.innerText()).toBe(child);
    await link.click();
    await page.waitForSelector('#parent-run');
    expect(await page.locator('#parent-run code').innerText()).toBe(run_id);
    expect(await page.locator('#parent-run a').getAttribute('href')).toBe(`#/tasks/${id}`);
  });

  test('signals: sent from the page of a task that waits for one, refused at the field, listed with the tasks they reached', async () => {
    const id = runScopedId('on-deploy');
    const name = runScopedId('deploy_finished');
    await sys.tk.tasks.create({
      task_id: id,
      tags: [tag],
      trigger: { type: 'delay', event: name, seconds: 3600 },
      agent: { type: 'openai', base_url: `${llm.url}/v1`, model: 'qwen2.5', api_key_env: 'LLM_API_KEY', prompt_template: 'after the deploy' },
    });
    await page.goto(`${sys.baseUrl}/#/tasks/${id}`);
    await page.waitForSelector('#signal-form');
    expect(await page.inputValue('#signal-form input[name=name]')).toBe(name);

    await page.fill('#signal-form input[name=name]', 'task_run:x');
    await page.click('#signal-form button[type=submit]');
    const nameError = page.locator('#signal-form [data-error-for="name"] .msg');
    await nameError.waitFor();
    expect(await nameError.innerText()).toMatch(/^is reserved/);

    await page.fill('#signal-form input[name=name]', name);
    await page.fill('#signal-form input[name=value]', '0.07');
    await page.fill('#signal-form textarea[name=values]', '{"host": "web-1"}');
    await page.fill('#signal-form input[name=signal_id]', runScopedId('sig'));
    await page.click('#signal-form button[type=submit]');
    const row = page.locator(`#signals-sent tr[data-signal="${runScopedId('sig')}"]`);
    await row.waitFor();
    expect(await row.locator('td.delivered a').innerText()).toBe(id);
    expect(await row.innerText()).toContain('0.07');
    expect(await page.locator('#signal-form [data-error-for="name"] .msg').count()).toBe(0);
    // The same signal id again: stored once, delivered again.
    await page.click('#signal-form button[type=submit]');
    await countIs(page.locator('#signals-sent tbody tr'), 2);
    expect(await page.locator('#signals-sent tbody tr').first().innerText()).toContain('already stored');
    await page.locator('#signals').scrollIntoViewIfNeeded();
    await shot(page, 'signals');
  });

  test('stored signals: one sent through the API is listed, newest first, and "More signals" pages on', async () => {
    const name = runScopedId('stored_sig');
    const ids: string[] = [];
    for (let i = 0; i < 11; i++) ids.push((await sys.tk.signals.send({ name, value: i, signal_id: `${name}-${i}` })).signal_id);
    await page.goto(`${sys.baseUrl}/#/tasks`);
    const rows = page.locator('#signals-stored tbody tr');
    await page.locator(`#signals-stored tr[data-signal="${ids[10]}"]`).waitFor();
    // The newest signal of all is the last one sent here; a page shows ten.
    expect(await rows.first().getAttribute('data-signal')).toBe(ids[10]);
    expect(await rows.first().innerText()).toContain(name);
    await countIs(rows, 10);
    expect(await page.locator(`#signals-stored tr[data-signal="${ids[0]}"]`).count()).toBe(0);
    await page.click('#signals-more');
    await page.locator(`#signals-stored tr[data-signal="${ids[0]}"]`).waitFor();
    const listed = await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-signal')));
    expect(listed.slice(0, 11)).toEqual([...ids].reverse());
  });

  test('state and artifacts: STATE.md rendered and sanitised, Markdown artifacts inline, other files downloaded', async () => {
    await page.goto(`${sys.baseUrl}/#/state`);
    await page.waitForSelector('#state h1');
    expect(await page.locator('#state h1').innerText()).toBe('Agent state');
    expect(await page.locator('#state strong').innerText()).toBe('Focus');
    expect(await page.locator('#state script').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as { hacked?: number }).hacked)).toBeUndefined();
    await shot(page, 'state');

    await page.goto(`${sys.baseUrl}/#/artifacts`);
    await page.waitForSelector('#artifacts-table');
    await page.click('button[aria-label="Read report.md"]');
    await page.waitForSelector('#artifact-view table');
    expect(await page.locator('#artifact-view h1').innerText()).toBe('Weekly report');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('button[aria-label="Download numbers.csv"]')]);
    expect(download.suggestedFilename()).toBe('numbers.csv');
    expect(fs.readFileSync(await download.path(), 'utf8')).toBe('day,mails\nMon,12\n');
    await shot(page, 'artifacts');
  });

  test('auto-refresh reloads the page every 30 s and remembers the choice; controls are reachable by keyboard', async () => {
    await page.clock.install();
    await page.goto(`${sys.baseUrl}/#/intents?domain=${domain}`);
    await page.waitForSelector('#intents-table');
    await page.check('#auto-refresh');
    await sys.tk.intents.create({ event_id: runScopedId('I-6'), domain, action: 'late-arrival' });
    expect(await page.locator('#intents-table tbody tr').count()).toBe(5);
    await page.clock.runFor(31_000);
    await countIs(page.locator('#intents-table tbody tr'), 6);
    await page.reload();
    expect(await page.isChecked('#auto-refresh')).toBe(true);
    await page.uncheck('#auto-refresh');

    // Tab from the top reaches the navigation links and the buttons, each with a visible focus style.
    await page.goto(`${sys.baseUrl}/#/tasks?tag=${tag}`);
    await page.locator(`#tasks-table tr[data-task="${taskId}"]`).waitFor();
    const reached = new Set<string>();
    const wanted = ['A:Sessions', 'A:Intents', 'A:Tasks', 'A:State', 'A:Artifacts', 'BUTTON:Refresh', 'INPUT:', `A:${taskId}`, 'BUTTON:Pause', 'BUTTON:Run now'];
    // Until every wanted stop was reached (how many stops lie between depends on what other test
    // files left in the shared database, e.g. needs-attention links), at most a long page's worth.
    for (let i = 0; i < 200 && !wanted.every((w) => reached.has(w)); i++) {
      await page.keyboard.press('Tab');
      const f = await page.evaluate(() => {
        const el = globalThis.document.activeElement as HTMLElement | null;
        return el ? { tag: el.tagName, text: el.textContent ?? '', outline: getComputedStyle(el).outlineStyle } : null;
      });
      if (f && f.tag !== 'BODY') {
        reached.add(`${f.tag}:${f.text.trim()}`);
        expect(`${f.tag}:${f.text.trim()} outline ${f.outline}`).not.toMatch(/outline none$/);
      }
    }
    for (const want of wanted) expect([...reached]).toContain(want);
  });
});

describe('the dashboard with API keys configured', () => {
  const KEY = 'dash-admin-key-123456';
  let sys: TestSystem;
  let browser: Awaited<ReturnType<typeof launch>>;

  beforeAll(async () => {
    sys = await startTestSystem({ apiKeys: `${KEY}:admin,dash-gateway-key-123456:gateway` });
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
    await sys?.stop();
  });

  test('nothing loads without a key: the page asks for one, keeps it in the browser, and then loads', async () => {
    const page = await browser.context.newPage();
    const seen = watch(page, sys.baseUrl);
    const id = runScopedId('dash-keyed');
    await sys.tk.with({ apiKey: KEY }).createSession({ session_id: id, agent_id: 'keyed-agent' });

    await page.goto(`${sys.baseUrl}/#/sessions?agent_id=keyed-agent`);
    await page.waitForSelector('.keyprompt');
    expect(await page.locator('#key-title').innerText()).toBe('An API key is needed');
    expect(await page.locator('#sessions-table').count()).toBe(0);
    expect(await page.locator('#pending-banner').count()).toBe(0);
    await shot(page, 'key-prompt');

    // A wrong key is refused with a clear message.
    await page.fill('#api-key', 'wrong-key-12345678');
    await page.click('.keyform button[type=submit]');
    await page.waitForSelector('.keyprompt');
    expect(await page.locator('.keyprompt p').innerText()).toContain('refused the stored key');

    await page.fill('#api-key', KEY);
    await page.click('.keyform button[type=submit]');
    await page.waitForSelector('#sessions-table');
    expect(await page.locator('#sessions-table tbody tr').getAttribute('data-session')).toBe(id);
    await page.locator('#pending-banner').waitFor();

    // Kept across reloads (localStorage), until forgotten.
    await page.reload();
    await page.waitForSelector('#sessions-table');
    await page.click('#key-button');
    await page.click('text=Forget key');
    await page.waitForSelector('.keyprompt');

    // A key without the scope a page needs says so (gateway may not read intents).
    await page.fill('#api-key', 'dash-gateway-key-123456');
    await page.click('.keyform button[type=submit]');
    await page.goto(`${sys.baseUrl}/#/intents`);
    await page.waitForSelector('#page-error');
    expect(await page.locator('#page-error h2').innerText()).toBe('Not allowed with this key');
    expect(seen.errors).toEqual([]);
    expect(seen.foreign).toEqual([]);
    await page.close();
  });
});

describe('the log badge: signed by the log, then witnessed', () => {
  const witnessKey = generateCosignerKey('witness.test/dashboard');
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tk-dash-witness-'));
  let sys: TestSystem;
  let browser: Awaited<ReturnType<typeof launch>>;
  let witness: WitnessServer | undefined;
  let port: number;

  beforeAll(async () => {
    port = await freePort();
    // The witness is configured but not up yet: checkpoints are published log-signed only.
    sys = await startTestSystem({
      tlog: true,
      config: { logWitnessing: { witnesses: parseWitnessList(`http://127.0.0.1:${port} ${witnessKey.verifierKey}`), quorum: 1 }, logBatchIntervalMs: 200 },
    });
    browser = await launch();
  });
  afterAll(async () => {
    await witness?.close();
    await browser?.close();
    await sys?.stop();
    fs.rmSync(stateDir, { recursive: true, force: true });
  });

  test('a session in a log-signed checkpoint shows "signed", once a quorum of witnesses cosigned one "witnessed"', async () => {
    const page = await browser.context.newPage();
    await page.setViewportSize(VIEWPORT);
    const seen = watch(page, sys.baseUrl);
    const id = runScopedId('dash-logged');
    await sys.tk.createSession({ session_id: id, agent_id: runScopedId('log-agent') });
    await sys.tk.append(id, { type: 'USER_INPUT', content: { input: 'Is this history witnessed?' } });
    await sys.tk.append(id, { type: 'LLM_RESPONSE', content: { response: 'Once a witness cosigns the checkpoint, yes.' } });
    await eventually('the session in a checkpoint', () => sessionLogged(sys, id), LOG_WAIT);
    // Other test files may have left a witnessed checkpoint behind (verify would use it): only
    // while verify proves this session against a log-signed one is the badge "signed".
    const v = await sys.tk.verify(id);
    if (!v.log.checkpoint?.witnessed) {
      await page.goto(`${sys.baseUrl}/#/sessions/${encodeURIComponent(id)}`);
      await page.waitForSelector('#log-badge');
      expect(await page.locator('#log-badge').getAttribute('data-state')).toBe('signed');
      expect(await page.locator('#log-badge').innerText()).toBe('signed by the log, not witnessed');
    }

    // The witness comes up; the builder's next round gets the checkpoint cosigned.
    const logKey = await sys.tk.log.key();
    const origin = parseCheckpoint(openNote(await sys.tk.log.checkpoint(), [noteVerifier(logKey)]).text).origin;
    witness = await startWitnessServer(new Witness({ signerKey: witnessKey.signerKey, logs: [{ origin, verifierKeys: [logKey] }], store: new WitnessStateStore(path.join(stateDir, 'state.json')) }), { host: '127.0.0.1', port });
    await eventually('verify to prove the session against a witnessed checkpoint', async () => {
      const r = await sys.tk.verify(id);
      return r.log.checkpoint?.witnessed && r.log.pending === 0 ? r : undefined;
    }, LOG_WAIT);
    // A fresh load (the same hash route again would not re-render).
    await page.goto('about:blank');
    await page.goto(`${sys.baseUrl}/#/sessions/${encodeURIComponent(id)}`);
    await page.waitForSelector('#log-badge');
    expect(await page.locator('#log-badge').getAttribute('data-state')).toBe('witnessed');
    expect(await page.locator('#log-badge').innerText()).toBe('✓ witnessed (1 cosignature)');
    expect(await page.locator('#verify-log').innerText()).toContain('3 in checkpoint');
    await shot(page, 'session-witnessed');
    expect(seen.errors).toEqual([]);
    expect(seen.foreign).toEqual([]);
    await page.close();
  });
});
