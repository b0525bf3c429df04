/**
 * Security headers on every response (issue 16): `nosniff` everywhere (JSON, problems, the
 * dashboard, /docs and its assets, /metrics, 404s), a CSP with frame-ancestors 'none' on /docs
 * that still lets Swagger UI render in a real Chromium (no CSP violation, no page error, every
 * operation listed), and the dashboard's strict CSP kept.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { routes } from '../../api/routes';
import { startTestSystem, TestSystem } from '../support';

const CHROMIUM = '/usr/bin/chromium';
const KEY = 'headers-admin-key';

let sys: TestSystem;
beforeAll(async () => {
  sys = await startTestSystem({ worker: false, apiKeys: `${KEY}:admin` });
});
afterAll(async () => {
  await sys?.stop();
});

const get = (p: string, headers: Record<string, string> = {}) => fetch(sys.baseUrl + p, { headers });

test.each([
  ['/healthz', {}],
  ['/openapi.json', {}],
  ['/v1/sessions', { authorization: `Bearer ${KEY}` }],
  ['/v1/sessions', {}], // a 401 problem
  ['/nowhere', {}], // a 404 problem
  ['/metrics', { authorization: `Bearer ${KEY}` }],
  ['/docs', {}],
  ['/docs/assets/swagger-ui.css', {}],
  ['/', {}],
])('%s answers with X-Content-Type-Options: nosniff and a CSP that forbids framing', async (p, headers) => {
  const r = await get(p, headers);
  await r.arrayBuffer();
  expect(r.headers.get('x-content-type-options')).toBe('nosniff');
  expect(r.headers.get('content-security-policy')).toMatch(/frame-ancestors 'none'/);
});

test("JSON answers carry the data CSP (load nothing); the dashboard keeps its strict page CSP", async () => {
  expect((await get('/openapi.json')).headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'");
  const dash = (await get('/')).headers.get('content-security-policy')!;
  expect(dash).toMatch(/^default-src 'none'; script-src 'self'; style-src 'self';/);
  expect(dash).not.toMatch(/unsafe-inline|unsafe-eval/);
});

test('/docs renders in Chromium under its CSP: every operation listed, no violation, no page error', async () => {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does it)`);
  const csp = (await get('/docs')).headers.get('content-security-policy')!;
  expect(csp).toMatch(/frame-ancestors 'none'/);
  expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|\*/);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'tk-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) problems.push(`console: ${m.text()}`);
    });
    await page.goto(`${sys.baseUrl}/docs`);
    // The page reports violations to itself too (console messages can be dropped).
    type Win = { violations: string[]; document: { addEventListener(t: string, f: (e: { violatedDirective: string; blockedURI: string }) => void): void; querySelectorAll(s: string): { length: number } } };
    await page.evaluate(() => {
      const w = globalThis as unknown as Win;
      w.violations = [];
      w.document.addEventListener('securitypolicyviolation', (e) => w.violations.push(`${e.violatedDirective} ${e.blockedURI}`));
    });
    const operations = Object.keys(routes).length;
    await page.waitForFunction((n) => (globalThis as unknown as Win).document.querySelectorAll('.opblock').length >= n, operations, { timeout: 30_000 });
    // Open one operation: its rendering (parameters, examples, schemas) must not need more.
    await page.locator('.opblock-summary').first().click();
    await page.waitForSelector('.opblock-body', { timeout: 10_000 });
    const violations = await page.evaluate(() => (globalThis as unknown as Win).violations);
    expect([...problems, ...violations]).toEqual([]);
  } finally {
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
});
