/** `npm run worker`: the Temporal worker alone (production). Runs pending migrations first; if the worker stops with an error the process exits with status 1, for the process manager to restart it. */
import { run } from './run';

void run({ worker: true, api: false, embedded: false });
