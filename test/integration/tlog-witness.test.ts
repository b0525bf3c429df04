/**
 * The witness (`timekeeper witness`, lib/tlog/witness.ts) over real HTTP, driven by the log's
 * witnessing client (lib/tlog/witnessing.ts) and by raw add-checkpoint requests: cosigning,
 * 409 with the witness's size and the client's retry, forks refused (422 / 409), unknown
 * origin 404, untrusted signature 403, malformed 400, the state on disk before the answer,
 * and the spec's race (two requests from the same old size: one wins).
 */
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { cosignatureVerifier, generateCosignerKey } from '../../lib/tlog/cosignature';
import { generateNoteKey, openNote } from '../../lib/tlog/note';
import { formatAddCheckpoint, Witness, WitnessStateStore } from '../../lib/tlog/witness';
import { startWitnessServer, type WitnessServer } from '../../lib/tlog/witness-server';
import { parseWitnessList, witnessCheckpoint, type WitnessEndpoint } from '../../lib/tlog/witnessing';
import { loadConfig } from '../../lib/config';
import { TestLog } from '../support/tlog-test-log';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tk-witness-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

interface Running {
  witness: Witness;
  server: WitnessServer;
  endpoint: WitnessEndpoint;
  stateFile: string;
  refusals: Array<{ status: number; reason: string }>;
}

const running: Running[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.server.close()));
});

let n = 0;
async function startWitness(logs: TestLog[], opts: { stateFile?: string; key?: { signerKey: string; verifierKey: string } } = {}): Promise<Running> {
  const key = opts.key ?? generateCosignerKey(`witness.test/w${++n}`);
  const stateFile = opts.stateFile ?? path.join(tmp, `state-${n}-${Date.now()}.json`);
  const refusals: Running['refusals'] = [];
  const witness = new Witness({
    signerKey: key.signerKey,
    logs: logs.map((l) => ({ origin: l.origin, verifierKeys: [l.key.verifierKey] })),
    store: new WitnessStateStore(stateFile),
    onRefusal: (r) => refusals.push(r),
  });
  const server = await startWitnessServer(witness, { host: '127.0.0.1', port: 0 });
  const r = { witness, server, endpoint: parseWitnessList(`${server.url} ${key.verifierKey}`)[0], stateFile, refusals };
  running.push(r);
  return r;
}

async function post(url: string, body: string): Promise<{ status: number; type: string; body: string }> {
  const res = await fetch(`${url}/add-checkpoint`, { method: 'POST', body });
  return { status: res.status, type: res.headers.get('content-type') ?? '', body: await res.text() };
}

const readState = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8')) as { logs: Record<string, { size: number; root: string }> };

describe('the witness over HTTP', () => {
  test('cosigns a first checkpoint and each consistent next one, persisting the state before answering', async () => {
    const log = new TestLog().grow(5);
    const w = await startWitness([log]);
    const first = await witnessCheckpoint({ note: log.checkpoint(), witnesses: [w.endpoint], quorum: 1, previousSize: 0, consistencyProof: log.consistency });
    expect(first).toMatchObject({ quorumMet: true, cosigners: [w.endpoint.name], failures: [], sizes: { [w.endpoint.name]: 5 } });
    const opened = openNote(first.note, [cosignatureVerifier(w.endpoint.verifierKey)]);
    expect(opened.verified.map((s) => s.name)).toEqual([w.endpoint.name]);
    expect(readState(w.stateFile).logs[log.origin]).toEqual(expect.objectContaining({ size: 5, root: log.tree.root().toString('base64') }));

    log.grow(9);
    const next = await witnessCheckpoint({ note: log.checkpoint(), witnesses: [w.endpoint], quorum: 1, previousSize: 5, consistencyProof: log.consistency });
    expect(next.quorumMet).toBe(true);
    expect(readState(w.stateFile).logs[log.origin].size).toBe(14);
    // The same checkpoint again (same size, same root): cosigned again.
    const again = await witnessCheckpoint({ note: log.checkpoint(), witnesses: [w.endpoint], quorum: 1, previousSize: 14, consistencyProof: log.consistency });
    expect(again.quorumMet).toBe(true);
  });

  test('answers 409 with its size when the old size is wrong; the client retries from that size', async () => {
    const log = new TestLog().grow(3);
    const w = await startWitness([log]);
    await witnessCheckpoint({ note: log.checkpoint(), witnesses: [w.endpoint], quorum: 1, previousSize: 0, consistencyProof: log.consistency });
    log.grow(4);
    const raw = await post(w.server.url, formatAddCheckpoint(0, [], log.checkpoint()));
    expect(raw).toEqual({ status: 409, type: 'text/x.tlog.size', body: '3\n' });
    const asked: Array<[number, number]> = [];
    const r = await witnessCheckpoint({
      note: log.checkpoint(),
      witnesses: [w.endpoint],
      quorum: 1,
      previousSize: 0, // the log does not know what the witness has
      consistencyProof: (from, to) => (asked.push([from, to]), log.consistency(from, to)),
    });
    expect(r).toMatchObject({ quorumMet: true, sizes: { [w.endpoint.name]: 7 } });
    expect(asked).toEqual([[3, 7]]);
  });

  test('refuses a rewritten log: 422 for a proof that does not verify, 409 for the same size with another root', async () => {
    const log = new TestLog().grow(10);
    const w = await startWitness([log]);
    await witnessCheckpoint({ note: log.checkpoint(), witnesses: [w.endpoint], quorum: 1, previousSize: 0, consistencyProof: log.consistency });
    const forked = log.fork(4).grow(3); // leaf 4 rewritten, 13 leaves
    const r = await witnessCheckpoint({ note: forked.checkpoint(), witnesses: [w.endpoint], quorum: 1, previousSize: 10, consistencyProof: forked.consistency });
    expect(r.quorumMet).toBe(false);
    expect(r.cosigners).toEqual([]);
    expect(r.failures).toEqual([{ witness: w.endpoint.name, status: 422, reason: 'the consistency proof from 10 to 13 does not verify' }]);
    // Nor does the honest proof of the original log help the fork.
    expect((await post(w.server.url, formatAddCheckpoint(10, log.grow(3).tree.consistency(10, 13), forked.checkpoint()))).status).toBe(422);
    const sameSize = await post(w.server.url, formatAddCheckpoint(10, [], log.fork(4, 10).checkpoint()));
    expect(sameSize.status).toBe(409);
    expect(sameSize.type).not.toBe('text/x.tlog.size');
    expect(readState(w.stateFile).logs[log.origin].size).toBe(10);
    expect(w.refusals.map((x) => x.status)).toEqual([422, 422, 409]);
    // The honest log continues.
    expect((await witnessCheckpoint({ note: log.checkpoint(), witnesses: [w.endpoint], quorum: 1, previousSize: 10, consistencyProof: log.consistency })).quorumMet).toBe(true);
  });

  test('404 for an unknown origin, 403 for a key it does not trust, 400 for malformed requests, 413 for huge bodies, 405 for GET', async () => {
    const log = new TestLog().grow(2);
    const w = await startWitness([log]);
    const other = new TestLog('other.test/log').grow(2);
    expect((await post(w.server.url, formatAddCheckpoint(0, [], other.checkpoint()))).status).toBe(404);
    const impostor = new TestLog(log.origin, generateNoteKey(log.origin)).grow(2);
    expect((await post(w.server.url, formatAddCheckpoint(0, [], impostor.checkpoint()))).status).toBe(403);
    const good = log.checkpoint();
    for (const body of [
      good, // no old line
      `old 01\n\n${good}`,
      `old 0\nnot-base64\n\n${good}`,
      `old 0\n\n${good.replace('\n\n', '\n')}`,
      formatAddCheckpoint(3, [], good), // old > size
    ]) {
      expect({ body, status: (await post(w.server.url, body)).status }).toEqual({ body, status: 400 });
    }
    expect((await post(w.server.url, formatAddCheckpoint(0, [log.tree.root()], good))).status).toBe(422); // proof from 0 must be empty
    expect((await post(w.server.url, 'x'.repeat(70_000))).status).toBe(413);
    expect((await fetch(`${w.server.url}/add-checkpoint`)).status).toBe(405);
    expect(fs.existsSync(w.stateFile)).toBe(false);
  });

  test('hostile bytes (invalid UTF-8, huge bodies, bad notes) get a 4xx and leave the state file as it was', async () => {
    const log = new TestLog().grow(5);
    const w = await startWitness([log]);
    await witnessCheckpoint({ note: log.checkpoint(), witnesses: [w.endpoint], quorum: 1, previousSize: 0, consistencyProof: log.consistency });
    const stateBefore = fs.readFileSync(w.stateFile);
    log.grow(2);
    const good = log.checkpoint();
    const proof = (await log.consistency(5, 7)).map((h) => h.toString('base64'));
    const req = (note: string, old = 5, hashes = proof) => `old ${old}\n${hashes.map((h) => `${h}\n`).join('')}\n${note}`;
    const [text, sigs] = [good.slice(0, good.indexOf('\n\n') + 1), good.slice(good.indexOf('\n\n') + 2)];
    const sigLine = sigs.trimEnd();
    const raw = async (body: Buffer | string) => (await fetch(`${w.server.url}/add-checkpoint`, { method: 'POST', body: typeof body === 'string' ? body : new Uint8Array(body) })).status;
    const cases: Array<[string, Buffer | string]> = [
      ['invalid UTF-8 in the body', Buffer.concat([Buffer.from('old 5\n'), Buffer.from([0xff, 0xfe, 0x0a, 0x0a]), Buffer.from(good)])],
      ['invalid UTF-8 in the note text', Buffer.from(Buffer.from(req(good).replace(log.origin, `${log.origin}\ufffd`), 'utf8').map((b) => (b === 0xef ? 0xc0 : b)))],
      ['an overlong UTF-8 encoding', Buffer.concat([Buffer.from(req(text.replace('\n', '')), 'utf8'), Buffer.from([0xc0, 0xaf])])],
      ['a lone surrogate (CESU-8)', Buffer.concat([Buffer.from(req(good)), Buffer.from([0xed, 0xa0, 0x80])])],
      ['a NUL in the note text', req(good.replace(log.origin, `${log.origin}\u0000x`))],
      ['a control character in the note text', req(good.replace(log.origin, `${log.origin}\u0007`))],
      ['CRLF line endings', req(good).replace(/\n/g, '\r\n')],
      ['a note without its signature block', req(text)],
      ['a note without a final newline', req(good.trimEnd())],
      ['a signature that is not base64', req(`${text}\n— ${log.origin} !!!notbase64\n`)],
      ['a signature line without the em dash', req(`${text}\n- ${sigLine.slice(2)}\n`)],
      ['a signature too short for its key id', req(`${text}\n— ${log.origin} AAA=\n`)],
      ['more than 100 signature lines', req(`${text}\n${`${sigLine}\n`.repeat(101)}`)],
      ['a tampered text under the trusted signature', req(good.replace(/\n7\n/, '\n8\n'))],
      ['a size with a leading zero', req(good.replace(/\n7\n/, '\n07\n'))],
      ['a root that is not 32 bytes', req(`${log.origin}\n7\nAAAA\n\n${sigs}`)],
      ['an old size beyond 2^63', req(good, Number.MAX_SAFE_INTEGER).replace(`old ${Number.MAX_SAFE_INTEGER}`, 'old 99999999999999999999')],
      ['a negative old size', req(good).replace('old 5', 'old -5')],
      ['64 proof hashes', req(good, 5, Array.from({ length: 64 }, () => proof[0]))],
      ['a proof hash of 31 bytes', req(good, 5, [Buffer.alloc(31).toString('base64'), ...proof.slice(1)])],
      ['an empty body', ''],
    ];
    const got: Array<[string, number]> = [];
    for (const [what, body] of cases) got.push([what, await raw(body)]);
    expect(got.filter(([, status]) => status < 400 || status >= 500)).toEqual([]);
    // Huge bodies: declared (refused before it is read) and streamed without a length.
    expect(await raw('x'.repeat(10_000_000))).toBe(413);
    const chunk = Buffer.alloc(64 * 1024, 0x41);
    const stream = new ReadableStream({
      pull(c) {
        c.enqueue(chunk);
      },
    });
    const streamed = await fetch(`${w.server.url}/add-checkpoint`, { method: 'POST', body: stream, duplex: 'half' } as RequestInit).then(
      (r) => r.status,
      () => 413, // the witness may close the connection while the client still sends: also a refusal
    );
    expect(streamed).toBe(413);
    expect(fs.readFileSync(w.stateFile)).toEqual(stateBefore);
    expect(w.refusals.every((r) => r.status >= 400 && r.status < 500)).toBe(true);
    // Still serving: the honest next checkpoint is cosigned.
    expect((await post(w.server.url, req(good))).status).toBe(200);
    expect(readState(w.stateFile).logs[log.origin].size).toBe(7);
  });

  test('two requests from the same old size: one is cosigned, the other gets 409 (no rollback)', async () => {
    const log = new TestLog().grow(4);
    const w = await startWitness([log]);
    await witnessCheckpoint({ note: log.checkpoint(), witnesses: [w.endpoint], quorum: 1, previousSize: 0, consistencyProof: log.consistency });
    log.grow(6);
    const [a, b] = await Promise.all([
      post(w.server.url, formatAddCheckpoint(4, log.tree.consistency(4, 10), log.checkpoint(10))),
      post(w.server.url, formatAddCheckpoint(4, log.tree.consistency(4, 7), log.checkpoint(7))),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    const won = a.status === 200 ? 10 : 7;
    expect(readState(w.stateFile).logs[log.origin].size).toBe(won);
    expect((a.status === 409 ? a : b).body).toBe(`${won}\n`);
  });

  test('a restarted witness keeps its state; quorum counts witnesses', async () => {
    const log = new TestLog().grow(6);
    const key = generateCosignerKey('witness.test/restart');
    const stateFile = path.join(tmp, 'restart.json');
    const w1 = await startWitness([log], { key, stateFile });
    const w2 = await startWitness([log]);
    const r = await witnessCheckpoint({ note: log.checkpoint(), witnesses: [w1.endpoint, w2.endpoint], quorum: 2, previousSize: 0, consistencyProof: log.consistency });
    expect(r.cosigners).toEqual([w1.endpoint.name, w2.endpoint.name]);
    expect(openNote(r.note, [cosignatureVerifier(w1.endpoint.verifierKey), cosignatureVerifier(w2.endpoint.verifierKey)]).verified).toHaveLength(2);
    await w1.server.close();
    const again = await startWitness([log], { key, stateFile });
    expect(await post(again.server.url, formatAddCheckpoint(0, [], log.checkpoint()))).toEqual({ status: 409, type: 'text/x.tlog.size', body: '6\n' });
    // One witness down: 1 of 2 cosignatures, quorum 2 not met, quorum 1 met.
    await w2.server.close();
    log.grow(2);
    const down = await witnessCheckpoint({ note: log.checkpoint(), witnesses: [again.endpoint, w2.endpoint], quorum: 2, previousSize: 6, consistencyProof: log.consistency });
    expect(down).toMatchObject({ quorumMet: false, cosigners: [again.endpoint.name] });
    expect(down.failures.map((f) => f.witness)).toEqual([w2.endpoint.name]);
  });

  test('no cosignature when the state cannot be written: the answer is an error and the old state stands', async () => {
    const log = new TestLog().grow(3);
    const stateFile = path.join(tmp, 'failing.json');
    const store = new WitnessStateStore(stateFile);
    let failWrites = false;
    const write = store.write.bind(store);
    store.write = (s) => {
      if (failWrites) throw new Error('disk full');
      write(s);
    };
    const key = generateCosignerKey('witness.test/failing');
    const witness = new Witness({ signerKey: key.signerKey, logs: [{ origin: log.origin, verifierKeys: [log.key.verifierKey] }], store });
    const server = await startWitnessServer(witness, { host: '127.0.0.1', port: 0 });
    try {
      expect((await post(server.url, formatAddCheckpoint(0, [], log.checkpoint()))).status).toBe(200);
      failWrites = true;
      log.grow(2);
      const failed = await post(server.url, formatAddCheckpoint(3, log.tree.consistency(3, 5), log.checkpoint()));
      expect(failed.status).toBe(500);
      expect(failed.body).not.toContain('\u2014');
      expect(witness.logState(log.origin)?.size).toBe(3);
      expect(readState(stateFile).logs[log.origin].size).toBe(3);
      // Once the disk is back, the same request is cosigned.
      failWrites = false;
      expect((await post(server.url, formatAddCheckpoint(3, log.tree.consistency(3, 5), log.checkpoint()))).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  test('a witness answer with a bad cosignature is not counted', async () => {
    const log = new TestLog().grow(2);
    const w = await startWitness([log]);
    const impostorKey = parseWitnessList(`${w.server.url} ${generateCosignerKey(w.endpoint.name).verifierKey}`)[0];
    const r = await witnessCheckpoint({ note: log.checkpoint(), witnesses: [impostorKey], quorum: 1, previousSize: 0, consistencyProof: log.consistency });
    expect(r.quorumMet).toBe(false);
    expect(r.failures[0].reason).toMatch(/no valid cosignature/);
  });

  test('LOG_WITNESSES and LOG_WITNESS_QUORUM (lib/config.ts)', () => {
    const a = generateCosignerKey('a.test/w').verifierKey;
    const b = generateCosignerKey('b.test/w').verifierKey;
    const s = loadConfig({ LOG_WITNESSES: `http://127.0.0.1:1/ ${a},\nhttps://w.example/x ${b}` }).logWitnessing;
    expect(s.witnesses.map((w) => [w.url, w.name])).toEqual([['http://127.0.0.1:1', 'a.test/w'], ['https://w.example/x', 'b.test/w']]);
    expect(s.quorum).toBe(2);
    expect(loadConfig({ LOG_WITNESSES: `http://a ${a}`, LOG_WITNESS_QUORUM: '0' }).logWitnessing.quorum).toBe(0);
    expect(() => loadConfig({ LOG_WITNESSES: `http://a ${a}`, LOG_WITNESS_QUORUM: '2' })).toThrow(/LOG_WITNESS_QUORUM/);
    expect(() => loadConfig({ LOG_WITNESSES: `ftp://a ${a}` })).toThrow(/http/);
    expect(() => loadConfig({ LOG_WITNESSES: `http://a ${generateNoteKey('x.test').verifierKey}` })).toThrow(/0x04/);
    expect(loadConfig({}).logWitnessing).toEqual({ witnesses: [], quorum: 0 });
  });
});

describe('timekeeper witness (the CLI)', () => {
  test('creates its key, serves add-checkpoint, and keeps its state across a restart', async () => {
    const dir = fs.mkdtempSync(path.join(tmp, 'cli-'));
    const log = new TestLog().grow(3);
    const bin = path.join(__dirname, '../../bin/timekeeper');
    const args = ['witness', '--key-file', path.join(dir, 'w.key'), '--state-file', path.join(dir, 'state.json'), '--name', 'witness.test/cli', '--log', log.key.verifierKey, '--listen', '127.0.0.1:0'];
    const printed = await new Promise<string>((resolve, reject) =>
      execFile(bin, ['witness', '--key-file', path.join(dir, 'w.key'), '--name', 'witness.test/cli', '--print-key'], (err, stdout) => (err ? reject(err) : resolve(stdout.trim()))),
    );
    expect(printed).toMatch(/^witness\.test\/cli\+[0-9a-f]{8}\+/);
    expect(fs.statSync(path.join(dir, 'w.key')).mode & 0o777).toBe(0o600);
    for (const [round, previousSize] of [[1, 0], [2, 3]] as const) {
      const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      try {
        let stdout = '';
        child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
        while (!stdout.includes('\n')) await once(child.stdout, 'data');
        const [endpoint] = parseWitnessList(stdout.trim());
        expect(endpoint.verifierKey).toBe(printed);
        if (round === 2) log.grow(2);
        const r = await witnessCheckpoint({ note: log.checkpoint(), witnesses: [endpoint], quorum: 1, previousSize, consistencyProof: log.consistency });
        expect(r).toMatchObject({ quorumMet: true, failures: [] });
      } finally {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
    }
    expect(readState(path.join(dir, 'state.json')).logs[log.origin].size).toBe(5);
  });
});
