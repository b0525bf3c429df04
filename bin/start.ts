/** `npm start`: worker and API in one process, PostgreSQL and Temporal started when not configured. */
import { run } from './run';

void run({ worker: true, api: true, embedded: true });
