/** `npm start`: worker and API in one process, PostgreSQL and Temporal started when not configured; the worker is restarted in the process if it fails. */
import { run } from './run';

void run({ worker: true, api: true, embedded: true, superviseWorker: true });
