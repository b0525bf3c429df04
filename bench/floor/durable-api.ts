/**
 * The durable floor's HTTP front (bench/floor/durable.ts starts it as its own process, as
 * Timekeeper's API is one): node's HTTP server and a Temporal client, nothing else. No
 * framework, no validation, no admission, no logging: the least a REST front to a workflow
 * costs, so Timekeeper's API is compared with it, not with a client that calls Temporal itself.
 *
 *   POST /init?id=<id>          update-with-start of floorWorkflow with the `floorDurable` update (row k = 0)
 *   POST /append?id=<id>&k=<k>  the `floorDurable` update: one local activity commits row k
 * With `&via=activity` both use the `floorDurableActivity` update (a regular activity commits).
 * The body is the row's JSON content. Answers 200 {"code":200,"data":{"seq":k}}, or 503 with
 * the error. Environment: FLOOR_TEMPORAL, FLOOR_NAMESPACE, FLOOR_TASK_QUEUE. Prints `port <n>`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, Connection, WithStartWorkflowOperation } from '@temporalio/client';
import { floorDurableActivityUpdate, floorDurableUpdate, floorWorkflow } from './workflow';

async function main(): Promise<void> {
  const connection = await Connection.connect({ address: process.env.FLOOR_TEMPORAL! });
  const client = new Client({ connection, namespace: process.env.FLOOR_NAMESPACE! });
  const taskQueue = process.env.FLOOR_TASK_QUEUE!;
  const wid = (id: string) => `floor/${id}`;

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const answer = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      void (async () => {
        try {
          const url = new URL(req.url ?? '/', 'http://floor');
          const id = url.searchParams.get('id') ?? '';
          const content: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
          const update = url.searchParams.get('via') === 'activity' ? floorDurableActivityUpdate : floorDurableUpdate;
          if (url.pathname === '/init') {
            const start = new WithStartWorkflowOperation(floorWorkflow, { workflowId: wid(id), taskQueue, workflowIdConflictPolicy: 'FAIL' });
            await client.workflow.executeUpdateWithStart(update, { args: [{ id, k: 0, content }], startWorkflowOperation: start });
            answer(200, { code: 200, data: { seq: 0 } });
          } else {
            const k = Number(url.searchParams.get('k'));
            await client.workflow.getHandle(wid(id)).executeUpdate(update, { args: [{ id, k, content }] });
            answer(200, { code: 200, data: { seq: k } });
          }
        } catch (e) {
          answer(503, { code: 503, message: (e as Error).message });
        }
      })();
    });
  });
  server.keepAliveTimeout = 5_000;
  server.listen(0, '127.0.0.1', () => console.log(`port ${(server.address() as AddressInfo).port}`));
  process.on('SIGTERM', () => process.exit(0));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
