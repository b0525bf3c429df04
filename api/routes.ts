/** Every route contract of the API, by capability: the source of the typed client and of /openapi.json. */
import { intentRoutes } from './intents/contract';
import { sessionRoutes } from './sessions/contract';
import { signalRoutes } from './signals/contract';
import { systemRoutes } from './system/contract';
import { taskRoutes } from './tasks/contract';
import { logRoutes } from './tlog/contract';

export const routes = { ...systemRoutes, ...sessionRoutes, ...intentRoutes, ...taskRoutes, ...signalRoutes, ...logRoutes } as const;
export type Routes = typeof routes;
export type RouteName = keyof Routes;
