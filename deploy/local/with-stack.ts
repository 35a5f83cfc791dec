#!/usr/bin/env node
import { spawn, type ChildProcess } from 'node:child_process';
import { constants } from 'node:os';
import { acquireStack, type AcquiredStack } from './acquire.js';
import { commandAfterSeparator, exitStatus, formatSeconds } from './cli-args.js';
import { whenNpmParentGone } from './parent-watch.js';
import { withoutCredentials } from './stack-choice.js';

const log = (line: string): void => {
  process.stderr.write(`[with-stack] ${line}\n`);
};

async function main(): Promise<number> {
  const command = commandAfterSeparator(process.argv.slice(2));
  const [cmd, ...args] = command;
  if (!cmd) {
    log('usage: node deploy/dist/local/with-stack.js -- <command> [args...]');
    return 2;
  }

  // Installed before the stack exists: a Ctrl-C while the JVMs boot must still stop them
  // (they live in their own process groups and never see the terminal's signal).
  let interrupted: NodeJS.Signals | undefined;
  let child: ChildProcess | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (child) {
      // A terminal's Ctrl-C or hangup already reached the child (same process group); SIGTERM
      // from a CI runner reached only us and is passed on. Either way we wait for it, then stop.
      if (signal === 'SIGTERM' && child.exitCode === null) child.kill(signal);
      return;
    }
    if (interrupted) process.exit(130); // second signal: give up; exit handlers SIGTERM the JVMs
    interrupted = signal;
    log(`${signal}: stopping once the stack has finished starting (again to force)`);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // Without a handler a hangup kills Node at once, and the JVMs (own process groups) run on.
  process.on('SIGHUP', onSignal);
  // Under `npm test` a shell runs us; npm's SIGTERM kills that shell, which does not pass it
  // on. Once it is gone, stop as if the SIGTERM had reached us.
  whenNpmParentGone('test', () => onSignal('SIGTERM'));

  let stack: AcquiredStack;
  try {
    stack = await acquireStack({ log: (line) => log(line) });
  } catch (err) {
    // Loud on purpose: tests that silently skip without Kafka would make a green run meaningless.
    log('');
    log('FAILED to provide Kafka + schema registry for the tests; nothing was run.');
    log(err instanceof Error ? err.message : String(err));
    return 1;
  }
  const origin =
    stack.provider === 'env' ? 'from KAFKA_BROKERS/SCHEMA_REGISTRY_URL' : stack.startedHere ? 'started here' : 'already running, reused';
  log(
    `stack: ${stack.provider} (${origin}), ready in ${formatSeconds(stack.startupMs)}; ` +
      `KAFKA_BROKERS=${stack.brokers.join(',')} SCHEMA_REGISTRY_URL=${withoutCredentials(stack.registryUrl)}`,
  );

  if (interrupted) {
    await stack.stop();
    return 128 + (constants.signals[interrupted] ?? 0);
  }

  const running = spawn(cmd, args, {
    stdio: 'inherit',
    env: { ...process.env, KAFKA_BROKERS: stack.brokers.join(','), SCHEMA_REGISTRY_URL: stack.registryUrl },
  });
  child = running;
  const status = await new Promise<number>((resolve) => {
    running.once('error', (err) => {
      log(`could not run "${cmd}": ${err.message}`);
      resolve(127);
    });
    running.once('exit', (code, signal) => resolve(exitStatus(code, signal, constants.signals)));
  });

  if (stack.startedHere) {
    const t = Date.now();
    await stack.stop();
    log(`stack stopped in ${formatSeconds(Date.now() - t)}`);
  }
  return status;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    log(err instanceof Error ? (err.stack ?? err.message) : String(err));
    process.exit(1);
  },
);
