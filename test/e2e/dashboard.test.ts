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
import { startTestSystem, TestSystem } from '../support/system';
import { chatAnswer, eventually, fakeServer, FakeServer, protocolAnswer } from '../support/fake-services';

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = path.resolve(__dirname, '..', '..', 'docs', 'screenshots');
const VIEWPORT = { width: 1366, height: 860 };

const stamp = `${process.pid}-${Date.now().toString(36)}`;
const uid = (p: string) => `${p}-${stamp}`;

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
const countIs = (loc: Locator, n: number) => eventually(async () => (await loc.count()) === n, 10_000, 100);

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
  const agent = uid('dash-agent');
  const channel = uid('web');
  const sessionA = uid('dash-a');
  const sessionB = uid('dash-b');
  const domain = uid('mail');
  const taskId = uid('digest');
  const tag = uid('dash');

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
      const system: string = JSON.parse(r.body).messages[0].content;
      return { body: chatAnswer(protocolAnswer(/task_id is "([^"]+)"/.exec(system)?.[1] ?? '?', { summary: 'digest sent: 3 topics' })) };
    });

    // Two sessions of one agent on one channel, one of another agent.
    await sys.tk.createSession({ session_id: sessionA, agent_id: agent, channel, metadata: { user: 'ada' } });
    await sys.tk.append(sessionA, { type: 'USER_INPUT', content: { input: 'What is on my calendar tomorrow?' } });
    await sys.tk.append(sessionA, { type: 'TOOL_CALL', content: { tool_name: 'calendar.list', params: { day: 'tomorrow', long: 'x'.repeat(400) } } });
    await sys.tk.append(sessionA, { type: 'TOOL_RESULT', content: { tool_name: 'calendar.list', result: ['09:00 stand-up', '14:00 review'] } });
    await sys.tk.append(sessionA, { type: 'LLM_RESPONSE', content: { response: 'Two meetings: stand-up at 9 and a review at 14.' } });
    await sys.tk.createSession({ session_id: sessionB, agent_id: uid('other-agent'), channel });
    await sys.tk.append(sessionB, { type: 'USER_INPUT', content: { input: 'hello' } });

    // Intents: requested, in progress, done, blocked with its structured data.
    await sys.tk.intents.create({ event_id: uid('I-1'), domain, action: 'send-daily-summary', tags: ['automation', 'user-john'], data: { recipient: 'john@example.com' } });
    await sys.tk.intents.create({ event_id: uid('I-2'), domain, action: 'archive-inbox', tags: ['automation'] });
    await sys.tk.intents.transition(uid('I-2'), { status: 'in-progress', note: 'archiving 120 mails' });
    await sys.tk.intents.create({ event_id: uid('I-3'), domain, action: 'send-invoice', tags: ['billing'] });
    await sys.tk.intents.transition(uid('I-3'), { status: 'in-progress' });
    await sys.tk.intents.transition(uid('I-3'), { status: 'done', data: { message_id: 'm-1' } });
    await sys.tk.intents.create({ event_id: uid('I-4'), domain, action: 'send-reminder', tags: ['automation'] });
    await sys.tk.intents.transition(uid('I-4'), {
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
    const id = uid('dash-broken');
    await sys.tk.createSession({ session_id: id, agent_id: agent, channel });
    await sys.tk.append(id, { type: 'USER_INPUT', content: { input: 'pay 10 EUR' } });
    await sys.tk.append(id, { type: 'LLM_RESPONSE', content: { response: 'paid' } });
    // Play a superuser: disable the append-only triggers, edit a stored event, put the triggers back (as test/integration/session-workflow.test.ts).
    const c = await sys.ownerPool.connect();
    try {
      await c.query('ALTER TABLE timeline_events DISABLE TRIGGER ALL');
      await c.query(`UPDATE timeline_events SET content = '{"input":"pay 1000 EUR"}' WHERE session_id = $1 AND seq = 2`, [id]);
    } finally {
      for (const t of ['timeline_events_guard', 'timeline_events_no_update_delete', 'timeline_events_no_truncate']) await c.query(`ALTER TABLE timeline_events ENABLE ALWAYS TRIGGER ${t}`);
      c.release();
    }
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
    const lifecycle = page.locator(`#intents-table tr[data-intent="${uid('I-3')}"] .lifecycle`);
    expect((await lifecycle.innerText()).replace(/\s+/g, ' ')).toBe('requested → in-progress → done');
    await shot(page, 'intents');

    // One more pending intent: the banner follows.
    const before = await count();
    await sys.tk.intents.create({ event_id: uid('I-5'), domain, action: 'call-back', tags: ['phone'] });
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
    await countIs(page.locator('#intents-table tbody tr'), 3);
    expect(page.url()).toContain('pending=1');
    const pendingIds = await page.locator('#intents-table tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-intent')));
    expect(pendingIds).toEqual([uid('I-1'), uid('I-2'), uid('I-5')]);

    // Filters: status, tags, search.
    await page.goto(`${sys.baseUrl}/#/intents?domain=${domain}`);
    await page.waitForSelector('#intents-table');
    await page.selectOption('select[name=status]', 'blocked');
    await page.click('form.filters button[type=submit]');
    await countIs(page.locator('#intents-table tbody tr'), 1);
    await page.selectOption('select[name=status]', '');
    await page.fill('input[name=tags]', 'automation');
    await page.click('form.filters button[type=submit]');
    await countIs(page.locator('#intents-table tbody tr'), 3);
    await page.fill('input[name=tags]', '');
    await page.fill('input[name=search]', 'SMTP');
    await page.click('form.filters button[type=submit]');
    await countIs(page.locator('#intents-table tbody tr'), 1);

    // The blocked one in detail.
    await page.click(`a[href="#/intents/${uid('I-4')}"]`);
    await page.waitForSelector('#transitions');
    expect(await page.locator('#transitions tbody tr').count()).toBe(2);
    const blocked = page.locator('#transitions tr[data-seq="2"] .blocked');
    expect(await blocked.innerText()).toContain('Connection timeout after 10s');
    expect(await blocked.innerText()).toContain('Retry in 5 minutes.');
    expect(await blocked.locator('time').getAttribute('datetime')).toBe('2031-10-27T12:05:00.000Z');
    expect(await page.locator('#lifecycle').innerText()).toBe('requested → blocked');
    await shot(page, 'intent-detail');

    // A pending one: its expiry is its workflow's expire timer.
    const detail = await sys.tk.intents.get(uid('I-1'));
    await page.goto(`${sys.baseUrl}/#/intents/${uid('I-1')}`);
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
    await sys.tk.intents.create({ event_id: uid('I-6'), domain, action: 'late-arrival' });
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
    const id = uid('dash-keyed');
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
