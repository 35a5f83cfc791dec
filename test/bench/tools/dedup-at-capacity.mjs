// What one message costs the router's dedup state once it is full (DEDUP_MAX_ENTRIES), where
// every new id forgets the oldest. Build the router first (npx turbo run build), then:
//   node test/bench/tools/dedup-at-capacity.mjs [entries=2000000] [rounds=5]
// Prints µs per message for rounds of 100,000 new ids, after filling the state.
import { DedupState } from '../../../services/router/dist/dedup.js';

const entries = Number(process.argv[2] ?? 2_000_000);
const rounds = Number(process.argv[3] ?? 5);
const PER_ROUND = 100_000;
const state = new DedupState({ windowMs: 86_400_000, maxEntries: entries, maxBytes: Number.MAX_SAFE_INTEGER });
// Keys shaped like the router's: <sourceId>/<messageId>, a UUID as analytics libraries send.
const key = (i) => `noisy-control/0c8a4e3e-${i.toString(16).padStart(8, '0')}-4bb1-9f7a-000000000000`;
const now = Date.now();
let started = performance.now();
for (let i = 0; i < entries; i++) state.remember(key(i), now, now);
console.log(`filled ${entries.toLocaleString('en')} entries in ${((performance.now() - started) / 1000).toFixed(1)} s; heap ${Math.round(process.memoryUsage().heapUsed / 1e6)} MB, resident ${Math.round(process.memoryUsage().rss / 1e6)} MB`);
for (let round = 0; round < rounds; round++) {
  started = performance.now();
  for (let i = 0; i < PER_ROUND; i++) {
    const next = key(entries + round * PER_ROUND + i);
    state.isDuplicate(next, now);
    state.remember(next, now, now);
  }
  console.log(`round ${round + 1}: ${((1000 * (performance.now() - started)) / PER_ROUND).toFixed(2)} µs per new id`);
}
