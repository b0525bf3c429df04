/** `npm run api`: the HTTP API alone (production). */
import { run } from './run';

void run({ worker: false, api: true, embedded: false });
