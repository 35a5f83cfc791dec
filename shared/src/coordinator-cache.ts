/**
 * Where each group's and transactional id's coordinator was last found, so that kafkajs does
 * not ask the cluster again before every transactional request. kafkajs 2.2.4 sends a
 * FindCoordinator request, and waits for its answer, before every AddPartitionsToTxn,
 * AddOffsetsToTxn, TxnOffsetCommit and EndTxn: four extra round trips in series in each
 * transaction that commits offsets, a quarter of all the requests the broker served under
 * the benchmark. The Java client keeps the coordinator until a request to it fails
 * (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, a lost connection) and only then looks it up
 * again; this does the same, with two safety nets: such a failure of a request to any
 * coordinator forgets every entry (`forgetAll`), since they are rare and a lookup is cheap,
 * and an entry is not trusted for longer than `ttlMs` even when nothing failed.
 */
export interface CoordinatorCacheOptions {
  ttlMs: number;
  now?: () => number;
}

interface Entry {
  nodeId: number;
  foundAt: number;
  generation: number;
}

/** What `forgetAll` invalidates: one generation for every cache, as a failure says nothing about which client it concerns. */
let generation = 0;

export class CoordinatorCache {
  private readonly entries = new Map<string, Entry>();
  private readonly now: () => number;

  constructor(private readonly options: CoordinatorCacheOptions) {
    this.now = options.now ?? Date.now;
  }

  /** The node last found for the key, unless a coordinator failed since or it is too old. */
  get(key: string, coordinatorType: number): number | undefined {
    const at = cacheKey(key, coordinatorType);
    const entry = this.entries.get(at);
    if (!entry) return undefined;
    if (entry.generation !== generation || this.now() - entry.foundAt >= this.options.ttlMs) {
      this.entries.delete(at);
      return undefined;
    }
    return entry.nodeId;
  }

  set(key: string, coordinatorType: number, nodeId: number): void {
    this.entries.set(cacheKey(key, coordinatorType), { nodeId, foundAt: this.now(), generation });
  }

  forget(key: string, coordinatorType: number): void {
    this.entries.delete(cacheKey(key, coordinatorType));
  }

  /** A request to some coordinator failed: every cache looks its coordinators up again. */
  static forgetAll(): void {
    generation++;
  }
}

/** Protocol errors by which a broker says it is not, or no longer, the coordinator asked for. */
const COORDINATOR_MOVED = new Set(['NOT_COORDINATOR_FOR_GROUP', 'GROUP_COORDINATOR_NOT_AVAILABLE']);

/**
 * Whether a failed coordinator request means the coordinator must be looked up again: when the
 * broker said so, or when the request got no answer at all (a connection lost, a timeout —
 * errors without a protocol error type). Other protocol errors come from the coordinator
 * itself: CONCURRENT_TRANSACTIONS, which a transaction started right after the previous
 * commit meets routinely, REBALANCE_IN_PROGRESS, a fenced producer…
 */
export function coordinatorMayHaveMoved(error: unknown): boolean {
  const type = protocolErrorType(error);
  return type !== undefined ? COORDINATOR_MOVED.has(type) : true;
}

/** The broker's error code name kafkajs put on an error (`CONCURRENT_TRANSACTIONS`…); none for errors without an answer. */
export function protocolErrorType(error: unknown): string | undefined {
  const type = error && typeof error === 'object' ? (error as { type?: unknown }).type : undefined;
  return typeof type === 'string' ? type : undefined;
}

function cacheKey(key: string, coordinatorType: number): string {
  return `${coordinatorType}\u0000${key}`;
}
