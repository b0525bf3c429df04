/** `npm run worker`: the Temporal worker alone (production). Runs pending migrations first. */
import { run } from './run';

void run({ worker: true, api: false, embedded: false });
