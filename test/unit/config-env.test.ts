/** Runtime configuration from the environment (lib/config.ts): defaults, bounds, derivations. */
import os from 'node:os';
import path from 'node:path';
import { APP_ROLE, DEFAULT_DATABASE_URL, deriveAppUrl, loadConfig, clientSettings, clusterSettings, openclawSkillsDir, toolSettings } from '../../lib/config';
import { MAX_TEMPORAL_PORT, MIN_TEMPORAL_PORT, temporalPorts } from '../../lib/cluster/temporal-server';
import { TUNABLE } from '../../lib/domain/limits';

const load = (env: Record<string, string>) => loadConfig(env as NodeJS.ProcessEnv);
const failure = (env: Record<string, string>): string => {
  try {
    load(env);
  } catch (err) {
    expect(err).toBeInstanceOf(Error);
    return (err as Error).message;
  }
  throw new Error(`expected ${JSON.stringify(env)} to be refused`);
};

describe('defaults', () => {
  test('an empty environment gives the documented defaults, the limits at their TUNABLE defaults', () => {
    const c = loadConfig({});
    expect(c.maxContentBytes).toBe(TUNABLE.maxContentBytes.default);
    expect(c.updatesPerRun).toBe(TUNABLE.updatesPerRun.default);
    expect(c.writeTimeoutMs).toBe(TUNABLE.writeTimeoutMs.default);
    expect(c).toMatchObject({
      port: 8000,
      host: '127.0.0.1',
      databaseUrl: DEFAULT_DATABASE_URL,
      databaseUrlIsDefault: true,
      appDatabaseUrl: 'postgres://timekeeper_app@127.0.0.1:5432/timekeeper',
      appDbPassword: undefined,
      temporalAddress: undefined,
      temporalNamespace: 'default',
      taskQueue: 'timekeeper',
      temporalUiUrl: 'http://127.0.0.1:8233',
      temporalLogLevel: 'WARN',
      dataDir: path.resolve('data'),
      workflowBundlePath: undefined,
      apiKeys: undefined,
      apiKeysFile: undefined,
    });
  });

  test('an empty string means the default, for every variable', () => {
    const empty = Object.fromEntries(
      [
        'PORT', 'HOST', 'DATABASE_URL', 'APP_DATABASE_URL', 'APP_DB_PASSWORD', 'TEMPORAL_ADDRESS', 'TEMPORAL_NAMESPACE', 'TEMPORAL_TASK_QUEUE',
        'TEMPORAL_UI_URL', 'TEMPORAL_LOG_LEVEL', 'TIMEKEEPER_DATA_DIR', 'TIMEKEEPER_WORKFLOW_BUNDLE', 'TIMEKEEPER_API_KEYS', 'TIMEKEEPER_API_KEYS_FILE',
        ...Object.values(TUNABLE).map((t) => t.env),
      ].map((k) => [k, '']),
    );
    expect(load(empty)).toEqual(loadConfig({}));
  });

  test('variables the schema does not know are ignored', () => {
    expect(load({ SOMETHING_ELSE: 'x', PATH: '/bin' })).toEqual(loadConfig({}));
  });
});

describe('integer variables', () => {
  const ints = [
    { env: 'PORT', min: 0, max: 65535, key: 'port' as const },
    ...Object.entries(TUNABLE).map(([key, t]) => ({ env: t.env, min: t.min, max: t.max, key: key as 'maxContentBytes' | 'updatesPerRun' | 'writeTimeoutMs' })),
  ];

  test.each(ints)('$env accepts its bounds', ({ env, min, max, key }) => {
    expect(load({ [env]: String(min) })[key]).toBe(min);
    expect(load({ [env]: String(max) })[key]).toBe(max);
  });

  test.each(ints)('$env refuses out-of-range and non-integer values with an Error naming it', ({ env, min, max }) => {
    for (const bad of [String(min - 1), String(max + 1), '1.5', 'abc', 'NaN', 'Infinity', '12abc', ' ', ' 80', '0x10', '1e3', '80.0', '+5']) {
      const msg = failure({ [env]: bad });
      expect(msg).toBe(`${env} must be an integer from ${min} to ${max}, got "${bad}"`);
    }
  });

  test('the bounds are the TUNABLE bounds', () => {
    expect(failure({ MAX_CONTENT_BYTES: '0' })).toContain(`from ${TUNABLE.maxContentBytes.min} to ${TUNABLE.maxContentBytes.max}`);
    expect(failure({ SESSION_UPDATES_PER_RUN: '1801' })).toContain('SESSION_UPDATES_PER_RUN');
    expect(failure({ WRITE_TIMEOUT_MS: '99' })).toContain('WRITE_TIMEOUT_MS');
    expect(load({ MAX_CONTENT_BYTES: '1024', SESSION_UPDATES_PER_RUN: '3', WRITE_TIMEOUT_MS: '100', PORT: '0' })).toMatchObject({
      maxContentBytes: 1024,
      updatesPerRun: 3,
      writeTimeoutMs: 100,
      port: 0,
    });
  });

  test('every bad variable is named in one message', () => {
    const msg = failure({ PORT: 'x', WRITE_TIMEOUT_MS: '99', MAX_CONTENT_BYTES: '0' });
    expect(msg.split('; ')).toHaveLength(3);
    for (const v of ['PORT', 'WRITE_TIMEOUT_MS', 'MAX_CONTENT_BYTES']) expect(msg).toContain(v);
  });
});

describe('TEMPORAL_LOG_LEVEL', () => {
  test('accepts the SDK levels', () => {
    for (const l of ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'] as const) expect(load({ TEMPORAL_LOG_LEVEL: l }).temporalLogLevel).toBe(l);
  });

  test('refuses anything else, naming the variable and the choices', () => {
    for (const bad of ['warn', 'VERBOSE', ' WARN']) {
      const msg = failure({ TEMPORAL_LOG_LEVEL: bad });
      expect(msg).toContain('TEMPORAL_LOG_LEVEL');
      expect(msg).toContain('TRACE, DEBUG, INFO, WARN, ERROR');
    }
  });
});

describe('database URLs', () => {
  test('the runtime URL is the owner URL with the app role as user', () => {
    const c = load({ DATABASE_URL: 'postgres://admin:secret@db.example:6543/tk?sslmode=require' });
    expect(c.databaseUrlIsDefault).toBe(false);
    expect(c.databaseUrl).toBe('postgres://admin:secret@db.example:6543/tk?sslmode=require');
    expect(c.appDatabaseUrl).toBe(`postgres://${APP_ROLE}@db.example:6543/tk?sslmode=require`);
  });

  test('APP_DB_PASSWORD goes into the derived URL, percent-encoded', () => {
    const c = load({ DATABASE_URL: 'postgres://admin@db:5432/tk', APP_DB_PASSWORD: 'p@ss w/rd' });
    expect(c.appDbPassword).toBe('p@ss w/rd');
    expect(c.appDatabaseUrl).toBe('postgres://timekeeper_app:p%40ss%20w%2Frd@db:5432/tk');
    expect(decodeURIComponent(new URL(c.appDatabaseUrl).password)).toBe('p@ss w/rd');
  });

  test('an explicit APP_DATABASE_URL wins over the derivation', () => {
    const c = load({ DATABASE_URL: 'postgres://admin@db/tk', APP_DATABASE_URL: 'postgres://other@elsewhere/x', APP_DB_PASSWORD: 'ignored' });
    expect(c.appDatabaseUrl).toBe('postgres://other@elsewhere/x');
  });

  test('deriveAppUrl replaces the owner password too', () => {
    expect(deriveAppUrl('postgres://owner:ownerpw@h:1/d')).toBe('postgres://timekeeper_app@h:1/d');
    expect(deriveAppUrl('postgres://owner:ownerpw@h:1/d', 'apppw')).toBe('postgres://timekeeper_app:apppw@h:1/d');
  });
});

describe('other values', () => {
  test('trailing slashes of the UI URL are dropped; the data dir is absolute', () => {
    const c = load({ TEMPORAL_UI_URL: 'https://ui.example/temporal///', TIMEKEEPER_DATA_DIR: 'some/rel' });
    expect(c.temporalUiUrl).toBe('https://ui.example/temporal');
    expect(c.dataDir).toBe(path.resolve('some/rel'));
  });

  test('addresses, names and keys are taken as given', () => {
    expect(
      load({ HOST: '0.0.0.0', TEMPORAL_ADDRESS: 't:7233', TEMPORAL_NAMESPACE: 'ns', TEMPORAL_TASK_QUEUE: 'q', TIMEKEEPER_API_KEYS: 'k:read', TIMEKEEPER_API_KEYS_FILE: '/k.json' }),
    ).toMatchObject({ host: '0.0.0.0', temporalAddress: 't:7233', temporalNamespace: 'ns', taskQueue: 'q', apiKeys: 'k:read', apiKeysFile: '/k.json' });
  });

  test('toolSettings: TEMPORAL_CLI and the XDG cache folder', () => {
    expect(toolSettings({ XDG_CACHE_HOME: '/cache', TEMPORAL_CLI: '/bin/temporal' })).toEqual({ temporalCli: '/bin/temporal', cliCacheDir: path.join('/cache', 'timekeeper', 'bin') });
    expect(toolSettings({ TEMPORAL_CLI: '' }).temporalCli).toBeUndefined();
  });

  test('clientSettings: TIMEKEEPER_URL (http or https, trailing slash dropped) and TIMEKEEPER_API_KEY', () => {
    expect(clientSettings({})).toEqual({ url: 'http://127.0.0.1:8000', apiKey: undefined, agentId: undefined });
    expect(clientSettings({ TIMEKEEPER_URL: 'https://tk.example/', TIMEKEEPER_API_KEY: 'k1', TIMEKEEPER_AGENT_ID: 'agent-7' })).toEqual({ url: 'https://tk.example', apiKey: 'k1', agentId: 'agent-7' });
    expect(() => clientSettings({ TIMEKEEPER_URL: 'ftp://tk.example' })).toThrow(/TIMEKEEPER_URL/);
    expect(() => clientSettings({ TIMEKEEPER_URL: 'not a url' })).toThrow(/TIMEKEEPER_URL/);
  });

  test('WORKFLOW_STACK_TRACES: off unless true or 1; anything else is refused by name', () => {
    expect(load({}).workflowStackTraces).toBe(false);
    expect(load({ WORKFLOW_STACK_TRACES: 'true' }).workflowStackTraces).toBe(true);
    expect(load({ WORKFLOW_STACK_TRACES: '1' }).workflowStackTraces).toBe(true);
    expect(load({ WORKFLOW_STACK_TRACES: 'false' }).workflowStackTraces).toBe(false);
    expect(failure({ WORKFLOW_STACK_TRACES: 'on' })).toMatch(/WORKFLOW_STACK_TRACES must be true or false/);
  });

  test('openclawSkillsDir: OPENCLAW_SKILLS_DIR, else ~/.openclaw/skills', () => {
    expect(openclawSkillsDir({ OPENCLAW_SKILLS_DIR: '/tmp/skills' })).toBe('/tmp/skills');
    expect(openclawSkillsDir({})).toBe(path.join(os.homedir(), '.openclaw', 'skills'));
  });
});

describe('PUBLIC_URL (where agents post results reported later)', () => {
  test('defaults to the listen address; a wildcard bind is reached on loopback, IPv6 in brackets', () => {
    expect(loadConfig({}).publicUrl).toBe('http://127.0.0.1:8000');
    expect(load({ HOST: '0.0.0.0', PORT: '9000', TIMEKEEPER_API_KEYS: 'k:gateway' }).publicUrl).toBe('http://127.0.0.1:9000');
    expect(load({ HOST: '::1', PORT: '9000' }).publicUrl).toBe('http://[::1]:9000');
    expect(load({ HOST: '10.1.2.3' }).publicUrl).toBe('http://10.1.2.3:8000');
  });

  test('is taken as given without a trailing slash; anything but an http(s) URL is refused naming the variable', () => {
    expect(load({ PUBLIC_URL: 'https://timekeeper.example/base/' }).publicUrl).toBe('https://timekeeper.example/base');
    expect(load({ PUBLIC_URL: '' }).publicUrl).toBe('http://127.0.0.1:8000');
    expect(failure({ PUBLIC_URL: 'timekeeper.example' })).toMatch(/PUBLIC_URL must be an http\(s\) URL/);
    expect(failure({ PUBLIC_URL: 'ftp://timekeeper.example' })).toMatch(/PUBLIC_URL must be an http\(s\) URL/);
  });
});

describe('agent task bounds (AGENT_TASK_*, AGENT_TASKS_MAX)', () => {
  test('default: no bounds; set: parsed, lists trimmed, hosts lowercase', () => {
    expect(loadConfig({}).agentTaskBounds).toEqual({ minIntervalS: 0, maxTasksPerAgent: 0, agentTypes: [], deliveryTypes: [], hosts: [] });
    expect(
      load({ AGENT_TASK_MIN_INTERVAL_S: '300', AGENT_TASKS_MAX: '20', AGENT_TASK_AGENT_TYPES: 'webhook, openclaw', AGENT_TASK_DELIVERY_TYPES: 'table,session', AGENT_TASK_HOSTS: 'GW.internal,127.0.0.1' }).agentTaskBounds,
    ).toEqual({ minIntervalS: 300, maxTasksPerAgent: 20, agentTypes: ['webhook', 'openclaw'], deliveryTypes: ['table', 'session'], hosts: ['gw.internal', '127.0.0.1'] });
  });
  test('an unknown type or a bad number stops start-up naming the variable', () => {
    expect(failure({ AGENT_TASK_AGENT_TYPES: 'webhook,shell' })).toMatch(/AGENT_TASK_AGENT_TYPES: shell not one of openai, webhook, openclaw, digest/);
    expect(failure({ AGENT_TASK_DELIVERY_TYPES: 'email' })).toMatch(/AGENT_TASK_DELIVERY_TYPES: email/);
    expect(failure({ AGENT_TASK_MIN_INTERVAL_S: '-1' })).toMatch(/AGENT_TASK_MIN_INTERVAL_S must be an integer/);
    expect(failure({ AGENT_TASKS_MAX: 'many' })).toMatch(/AGENT_TASKS_MAX must be an integer/);
  });
});

describe('OpenTelemetry export settings', () => {
  test('off unless OTEL_EXPORTER_OTLP_ENDPOINT is set; service name and the exporter tunables default', () => {
    expect(loadConfig({})).toMatchObject({ otelEndpoint: undefined, otelServiceName: 'timekeeper', otelPollMs: TUNABLE.otelPollMs.default, otelSettleMs: TUNABLE.otelSettleMs.default });
    expect(load({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SERVICE_NAME: 'tk-prod', TIMEKEEPER_OTEL_POLL_MS: '1000', TIMEKEEPER_OTEL_SETTLE_MS: '0' })).toMatchObject({
      otelEndpoint: 'http://127.0.0.1:4318',
      otelServiceName: 'tk-prod',
      otelPollMs: 1000,
      otelSettleMs: 0,
    });
  });

  test('a bad endpoint or an out-of-range tunable is refused naming the variable', () => {
    expect(failure({ OTEL_EXPORTER_OTLP_ENDPOINT: '127.0.0.1:4318' })).toMatch(/OTEL_EXPORTER_OTLP_ENDPOINT must be an http\(s\) URL/);
    expect(failure({ TIMEKEEPER_OTEL_POLL_MS: '10' })).toMatch(/TIMEKEEPER_OTEL_POLL_MS/);
  });
});

describe('TEMPORAL_PORT (npm run cluster)', () => {
  test('defaults to 7233; its bounds are the ones the derived ports need (membership ports in a smallint)', () => {
    expect(clusterSettings({}).temporalPort).toBe(7233);
    expect(clusterSettings({ TEMPORAL_PORT: '17233' }).temporalPort).toBe(17233);
    expect(() => clusterSettings({ TEMPORAL_PORT: '40000' })).toThrow(/TEMPORAL_PORT must be an integer from 1324 to 33000, got "40000"/);
    expect(() => clusterSettings({ TEMPORAL_PORT: '72e2' })).toThrow(/TEMPORAL_PORT/);
    expect(temporalPorts(MAX_TEMPORAL_PORT).workerMembership).toBeLessThanOrEqual(32767);
    expect(temporalPorts(MIN_TEMPORAL_PORT).frontendMembership).toBeGreaterThanOrEqual(1024);
    expect(() => temporalPorts(MAX_TEMPORAL_PORT + 1)).toThrow(/TEMPORAL_PORT/);
    // The environment's bounds are the port derivation's.
    expect(clusterSettings({ TEMPORAL_PORT: String(MAX_TEMPORAL_PORT) }).temporalPort).toBe(MAX_TEMPORAL_PORT);
    expect(clusterSettings({ TEMPORAL_PORT: String(MIN_TEMPORAL_PORT) }).temporalPort).toBe(MIN_TEMPORAL_PORT);
    expect(() => clusterSettings({ TEMPORAL_PORT: String(MAX_TEMPORAL_PORT + 1) })).toThrow(/TEMPORAL_PORT/);
    expect(() => clusterSettings({ TEMPORAL_PORT: String(MIN_TEMPORAL_PORT - 1) })).toThrow(/TEMPORAL_PORT/);
  });
});

describe('LOG_TILE_CACHE_BYTES', () => {
  test('defaults to 64 MiB, takes 0 (off) to 16 GiB, refuses anything else naming the variable', () => {
    expect(loadConfig({}).logTileCacheBytes).toBe(64 * 1024 * 1024);
    expect(load({ LOG_TILE_CACHE_BYTES: '0' }).logTileCacheBytes).toBe(0);
    expect(load({ LOG_TILE_CACHE_BYTES: String(16 * 1024 ** 3) }).logTileCacheBytes).toBe(16 * 1024 ** 3);
    for (const bad of [String(16 * 1024 ** 3 + 1), '-1', '64M', '1e6']) expect(failure({ LOG_TILE_CACHE_BYTES: bad })).toContain('LOG_TILE_CACHE_BYTES');
  });
});
