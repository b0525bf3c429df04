/** API key scopes and what each operation needs; admin may do everything. Pure: the contracts import it. */
export const Scope = { Gateway: 'gateway', Agent: 'agent', Auditor: 'auditor', Admin: 'admin' } as const;
export type Scope = (typeof Scope)[keyof typeof Scope];
export const SCOPES = Object.values(Scope) as string[];

export const Operation = {
  CreateSession: [Scope.Gateway],
  EndSession: [Scope.Gateway],
  Append: [Scope.Gateway, Scope.Agent],
  Read: [Scope.Agent, Scope.Auditor],
  Verify: [Scope.Auditor],
  /** Create and transition intents (the OML routes): the agent's own operational memory. */
  WriteIntent: [Scope.Agent, Scope.Gateway],
  /** Read intents, pending, stats and verify: agents recover from them, auditors check them. */
  ReadIntents: [Scope.Agent, Scope.Auditor],
  /** Create, change, pause, resume, delete and trigger scheduled tasks (an agent may schedule its own follow-ups). */
  ManageTasks: [Scope.Gateway, Scope.Agent],
  ReadTasks: [Scope.Gateway, Scope.Agent, Scope.Auditor],
  /** Send named events (POST /v1/signals) to delay and condition triggers: gateways and agents report what happened. */
  SendSignals: [Scope.Gateway, Scope.Agent],
  /** GET /metrics: operational data (counts, latencies, health) for monitoring. */
  Metrics: [Scope.Auditor],
  Public: [],
} as const satisfies Record<string, readonly Scope[]>;
export type Operation = (typeof Operation)[keyof typeof Operation];
