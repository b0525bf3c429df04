/** What the session routers need: the session client for writes, the store for reads. */
import type { SessionClient } from '../../clients/sessions';
import type { SessionStore } from '../../lib/store/sessions';
import type { TlogStore } from '../../lib/store/tlog';
import type { WitnessTrust } from '../../lib/tlog/chain-check';
import type { Admission } from '../admission';
import type { KeyStore } from '../auth';

export interface SessionDeps {
  sessions: SessionClient;
  /** Bounds the writes this process has in flight (refuses beyond them before sending). */
  admission: Admission;
  store: SessionStore;
  /** log_index of events (the transparency log's leaves). */
  tlog: TlogStore;
  /** LOG_WITNESSES' keys and LOG_WITNESS_QUORUM: verify checks against the newest witnessed checkpoint and counts its cosignatures itself. */
  witnessTrust?: WitnessTrust;
  keys: KeyStore;
  /** Base of the Temporal Web UI links in session descriptions. */
  temporalUiUrl: string;
  temporalNamespace: string;
}
