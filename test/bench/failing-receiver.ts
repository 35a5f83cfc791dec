/**
 * The failing webhook receivers of the noisy-neighbour scenario, in their own process
 * (forked by the orchestrator, reporting over IPC): `/fail` answers 503 at once (and
 * `/warmup-fail`, counted apart, for the warm-up's failing burst), `/hang` never answers (the dispatcher's 5 s answer window runs out; the socket is dropped after a
 * minute), `/slow` answers 200 after BENCH_SLOW_MS (a receiver that works, slowly, within the
 * window), and `/ok` answers 200 at once — the control burst, to a destination that works. Counts the requests each path got, so the run can say how many of the burst's
 * deliveries cost a request and how many were deferred without one. (Connection refused
 * needs no process: a port nothing listens on.)
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FailingReceiverCommand, FailingReceiverReport } from './protocol.js';

if (!process.send) throw new Error('the failing receiver runs as a forked child');
const report = (message: FailingReceiverReport): void => void process.send!(message);

const requests = { fail: 0, warmupFail: 0, hang: 0, ok: 0, slow: 0, slowAnswered: 0, other: 0 };
const SLOW_MS = Number(process.env.BENCH_SLOW_MS ?? 3_000);
const HANG_MS = 60_000;
const hanging = new Set<ServerResponse>();

const server = createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    const failing = request.url?.startsWith('/fail') ? 'fail' : request.url?.startsWith('/warmup-fail') ? 'warmupFail' : undefined;
    if (failing) {
      requests[failing]++;
      response.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"unavailable"}');
    } else if (request.url?.startsWith('/hang')) {
      requests.hang++;
      hanging.add(response);
      const timer = setTimeout(() => response.destroy(), HANG_MS);
      response.on('close', () => {
        clearTimeout(timer);
        hanging.delete(response);
      });
    } else if (request.url?.startsWith('/slow')) {
      requests.slow++;
      const timer = setTimeout(() => {
        requests.slowAnswered++;
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      }, SLOW_MS);
      response.on('close', () => clearTimeout(timer));
    } else if (request.url?.startsWith('/ok')) {
      requests.ok++;
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    } else {
      requests.other++;
      response.writeHead(404).end();
    }
  });
});
server.keepAliveTimeout = 60_000;

process.on('message', (command: FailingReceiverCommand) => {
  if (command.kind === 'counts') report({ kind: 'counts', ...requests, hangingNow: hanging.size });
});
process.on('disconnect', () => process.exit(0));
server.listen(0, '127.0.0.1', () => report({ kind: 'listening', port: (server.address() as AddressInfo).port }));
