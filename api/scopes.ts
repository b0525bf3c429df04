/** API key scopes and what each operation needs: lib/platform/scopes.ts (the worker's /metrics checks them too). */
export { Scope, SCOPES, Operation } from '../lib/platform/scopes';
