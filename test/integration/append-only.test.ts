/**
 * timekeeper_make_append_only (schema/003_append_only.sql) against the real PostgreSQL:
 * a table it protects refuses UPDATE, DELETE and TRUNCATE even to a superuser and even
 * under session_replication_role = replica, the application role may only read and append,
 * calling it twice changes nothing, and the protection it gives is exactly the one the
 * timeline tables have. No Temporal needed.
 */
import { Pool } from 'pg';
import { createPool, quoteIdent } from '../../lib/db';
import { testEnv } from '../support';

let owner: Pool;
let app: Pool;

beforeAll(() => {
  const env = testEnv();
  owner = createPool(env.ownerUrl, { max: 2 });
  app = createPool(env.appUrl, { max: 2 });
});

afterAll(async () => {
  await app?.end();
  await owner?.end();
});

let tableCounter = 0;
/**
 * A fresh table (left behind: the test database is dropped after the run). Names stay
 * within the helper's 46-byte limit.
 */
async function scratchTable(prefix = 'ao'): Promise<string> {
  const name = `${prefix}_${process.pid}_${Date.now().toString(36)}_${tableCounter++}`;
  await owner.query(`CREATE TABLE ${quoteIdent(name)} (
    id   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    note text NOT NULL)`);
  return name;
}

async function makeAppendOnly(table: string, appMayInsert?: boolean): Promise<void> {
  if (appMayInsert === undefined) await owner.query('SELECT timekeeper_make_append_only($1)', [quoteIdent(table)]);
  else await owner.query('SELECT timekeeper_make_append_only($1, app_may_insert => $2)', [quoteIdent(table), appMayInsert]);
}

/** The trigger's refusal: SQLSTATE 42501 and "append-only" in the message. */
const appendOnlyRefusal = { code: '42501', message: expect.stringContaining('append-only') };
/** A privilege refusal (the app role lacks the privilege, so the trigger is not even reached). */
const privilegeRefusal = { code: '42501' };

function changes(table: string): Record<string, string> {
  const t = quoteIdent(table);
  return {
    UPDATE: `UPDATE ${t} SET note = 'changed'`,
    DELETE: `DELETE FROM ${t}`,
    TRUNCATE: `TRUNCATE ${t}`,
  };
}

interface TriggerRow {
  suffix: string;
  fn: string;
  enabled: string;
  type: number;
}

/** The append-only triggers of a table (those running timeline_forbid_change()), named by suffix. */
async function appendOnlyTriggers(table: string): Promise<TriggerRow[]> {
  const { rows } = await owner.query<TriggerRow & { tgname: string; relname: string }>(
    `SELECT g.tgname, c.relname,
            substr(g.tgname, length(c.relname) + 1) AS suffix,
            g.tgfoid::regprocedure::text AS fn,
            g.tgenabled::text AS enabled,
            g.tgtype::int AS type
       FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid
      WHERE g.tgrelid = $1::regclass AND NOT g.tgisinternal
        AND g.tgfoid = 'timeline_forbid_change()'::regprocedure
      ORDER BY suffix`,
    [quoteIdent(table)],
  );
  for (const r of rows) expect(r.tgname.startsWith(r.relname)).toBe(true);
  return rows.map(({ suffix, fn, enabled, type }) => ({ suffix, fn, enabled, type }));
}

/** Owner and the full ACL (PUBLIC written as such), normalised for comparison. */
async function ownership(table: string): Promise<{ owner: string; acl: string[] }> {
  const { rows: [c] } = await owner.query<{ owner: string }>(
    'SELECT relowner::regrole::text AS owner FROM pg_class WHERE oid = $1::regclass',
    [quoteIdent(table)],
  );
  const { rows } = await owner.query<{ entry: string }>(
    `SELECT format('%s:%s:%s',
                   CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE a.grantee::regrole::text END,
                   a.privilege_type, a.is_grantable) AS entry
       FROM pg_class c, aclexplode(c.relacl) a
      WHERE c.oid = $1::regclass
      ORDER BY 1`,
    [quoteIdent(table)],
  );
  return { owner: c.owner, acl: rows.map((r) => r.entry) };
}

const PRIVILEGES = ['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'REFERENCES', 'TRIGGER'];
async function appPrivileges(table: string): Promise<string[]> {
  const held: string[] = [];
  for (const p of PRIVILEGES) {
    const { rows: [r] } = await owner.query<{ ok: boolean }>(
      "SELECT has_table_privilege('timekeeper_app', $1::regclass, $2) AS ok",
      [quoteIdent(table), p],
    );
    if (r.ok) held.push(p);
  }
  return held;
}

test('as the owner (a superuser): INSERT works; UPDATE, DELETE and TRUNCATE are refused, also under session_replication_role = replica', async () => {
  const table = await scratchTable();
  await makeAppendOnly(table);
  const t = quoteIdent(table);

  await owner.query(`INSERT INTO ${t} (note) VALUES ('first'), ('second')`);
  for (const sql of Object.values(changes(table))) await expect(owner.query(sql)).rejects.toMatchObject(appendOnlyRefusal);

  const c = await owner.connect();
  try {
    await c.query('SET session_replication_role = replica');
    expect((await c.query('SHOW session_replication_role')).rows[0].session_replication_role).toBe('replica');
    await c.query(`INSERT INTO ${t} (note) VALUES ('under replica')`);
    for (const sql of Object.values(changes(table))) await expect(c.query(sql)).rejects.toMatchObject(appendOnlyRefusal);
  } finally {
    await c.query('RESET session_replication_role').catch(() => undefined);
    c.release();
  }

  const { rows } = await owner.query(`SELECT note FROM ${t} ORDER BY id`);
  expect(rows.map((r) => r.note)).toEqual(['first', 'second', 'under replica']);
});

test('as the application role: INSERT and SELECT work; UPDATE, DELETE and TRUNCATE are refused', async () => {
  const table = await scratchTable();
  await makeAppendOnly(table);
  const t = quoteIdent(table);

  await app.query(`INSERT INTO ${t} (note) VALUES ('by app')`);
  const { rows } = await app.query(`SELECT note FROM ${t}`);
  expect(rows.map((r) => r.note)).toEqual(['by app']);
  for (const sql of Object.values(changes(table))) await expect(app.query(sql)).rejects.toMatchObject(privilegeRefusal);
  expect((await app.query(`SELECT count(*)::int AS n FROM ${t}`)).rows[0].n).toBe(1);
});

test('calling the helper twice leaves exactly two triggers and the same privileges', async () => {
  const table = await scratchTable();
  await makeAppendOnly(table);
  const once = { triggers: await appendOnlyTriggers(table), ownership: await ownership(table) };
  await makeAppendOnly(table);

  const { rows } = await owner.query(
    'SELECT tgname, tgenabled::text AS enabled FROM pg_trigger WHERE tgrelid = $1::regclass AND NOT tgisinternal ORDER BY tgname',
    [quoteIdent(table)],
  );
  expect(rows).toEqual([
    { tgname: `${table}_no_truncate`, enabled: 'A' },
    { tgname: `${table}_no_update_delete`, enabled: 'A' },
  ]);
  expect(await appendOnlyTriggers(table)).toEqual(once.triggers);
  expect(await ownership(table)).toEqual(once.ownership);
});

test("the helper's protection is the timeline tables' protection: same triggers, owner and grants", async () => {
  const appendable = await scratchTable();
  await makeAppendOnly(appendable);
  const readOnly = await scratchTable();
  await makeAppendOnly(readOnly, false);

  const made = await appendOnlyTriggers(appendable);
  expect(made).toEqual([
    { suffix: '_no_truncate', fn: 'timeline_forbid_change()', enabled: 'A', type: 2 | 32 }, // BEFORE, TRUNCATE (statement)
    { suffix: '_no_update_delete', fn: 'timeline_forbid_change()', enabled: 'A', type: 1 | 2 | 8 | 16 }, // ROW, BEFORE, DELETE, UPDATE
  ]);
  expect(await appendOnlyTriggers(readOnly)).toEqual(made);
  for (const timelineTable of ['timeline_events', 'timeline_sessions', 'timekeeper_instance']) {
    expect({ table: timelineTable, triggers: await appendOnlyTriggers(timelineTable) }).toEqual({ table: timelineTable, triggers: made });
  }

  // Owner timekeeper_owner, nothing for PUBLIC, and for timekeeper_app exactly SELECT, INSERT
  // (timekeeper_instance, written only by its migration: SELECT alone).
  const appendableAcl = (await ownership(appendable)).acl;
  expect((await ownership(appendable)).owner).toBe('timekeeper_owner');
  expect(appendableAcl.filter((e) => e.startsWith('PUBLIC:'))).toEqual([]);
  expect(await appPrivileges(appendable)).toEqual(['SELECT', 'INSERT']);
  expect(await appPrivileges(readOnly)).toEqual(['SELECT']);
  expect(await ownership('timeline_sessions')).toEqual(await ownership(appendable));
  expect(await appPrivileges('timeline_sessions')).toEqual(['SELECT', 'INSERT']);
  // The chained tables: INSERT on every column but log_xid (schema/017_tlog.sql: the writer
  // cannot put a record behind the log builder's horizon), SELECT on the table.
  for (const chained of ['timeline_events', 'intent_transitions']) {
    expect((await ownership(chained)).owner).toBe('timekeeper_owner');
    expect((await ownership(chained)).acl.filter((e) => e.startsWith('PUBLIC:'))).toEqual([]);
    expect(await appPrivileges(chained)).toEqual(['SELECT']);
    const { rows } = await owner.query(
      `SELECT has_column_privilege('timekeeper_app', $1::regclass, 'log_xid', 'INSERT') AS log_xid,
              has_column_privilege('timekeeper_app', $1::regclass, 'hash', 'INSERT') AS hash`,
      [chained],
    );
    expect({ chained, ...rows[0] }).toEqual({ chained, log_xid: false, hash: true });
  }
  expect(await ownership('timekeeper_instance')).toEqual(await ownership(readOnly));
  expect(await appPrivileges('timekeeper_instance')).toEqual(['SELECT']);
});

test('the application role cannot execute the helper; only its owner and superusers can', async () => {
  const table = await scratchTable();
  await expect(app.query('SELECT timekeeper_make_append_only($1)', [quoteIdent(table)])).rejects.toMatchObject({
    code: '42501',
    message: expect.stringContaining('permission denied for function timekeeper_make_append_only'),
  });
  const { rows: [f] } = await owner.query(
    `SELECT p.proowner::regrole::text AS owner,
            has_function_privilege('timekeeper_app', p.oid, 'EXECUTE') AS app_may_execute,
            EXISTS (SELECT 1 FROM aclexplode(p.proacl) a WHERE a.grantee = 0) AS public_may_execute
       FROM pg_proc p WHERE p.oid = 'timekeeper_make_append_only(regclass, boolean)'::regprocedure`,
  );
  expect(f).toEqual({ owner: 'timekeeper_owner', app_may_execute: false, public_may_execute: false });
  // The refused call left the table untouched.
  expect((await owner.query('SELECT count(*)::int AS n FROM pg_trigger WHERE tgrelid = $1::regclass', [quoteIdent(table)])).rows[0].n).toBe(0);
});

test('schema-qualified names that need quoting work', async () => {
  const schema = `Append Only ${process.pid}_${tableCounter++}`;
  const table = `Odd"Name_${Date.now().toString(36)}`;
  const qualified = `${quoteIdent(schema)}.${quoteIdent(table)}`;
  await owner.query(`CREATE SCHEMA ${quoteIdent(schema)}`);
  await owner.query(`CREATE TABLE ${qualified} (id bigint GENERATED ALWAYS AS IDENTITY, note text)`);
  await owner.query('SELECT timekeeper_make_append_only($1)', [qualified]);
  await owner.query('SELECT timekeeper_make_append_only($1)', [qualified]);

  const { rows } = await owner.query(
    'SELECT tgname, tgenabled::text AS enabled FROM pg_trigger WHERE tgrelid = $1::regclass AND NOT tgisinternal ORDER BY tgname',
    [qualified],
  );
  expect(rows).toEqual([
    { tgname: `${table}_no_truncate`, enabled: 'A' },
    { tgname: `${table}_no_update_delete`, enabled: 'A' },
  ]);
  await owner.query(`INSERT INTO ${qualified} (note) VALUES ('x')`);
  await expect(owner.query(`UPDATE ${qualified} SET note = 'y'`)).rejects.toMatchObject(appendOnlyRefusal);
  await expect(owner.query(`DELETE FROM ${qualified}`)).rejects.toMatchObject(appendOnlyRefusal);
  await expect(owner.query(`TRUNCATE ${qualified}`)).rejects.toMatchObject(appendOnlyRefusal);
});

test('a same-named trigger that does something else is an error, not silently accepted', async () => {
  const table = await scratchTable();
  await owner.query(
    `CREATE TRIGGER ${quoteIdent(`${table}_no_update_delete`)} BEFORE UPDATE ON ${quoteIdent(table)}
       FOR EACH ROW EXECUTE FUNCTION timeline_forbid_change()`,
  );
  await expect(owner.query('SELECT timekeeper_make_append_only($1)', [quoteIdent(table)])).rejects.toMatchObject({
    code: '42710',
    message: expect.stringContaining('already has a trigger'),
  });
});
