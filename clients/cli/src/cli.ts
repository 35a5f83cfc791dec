#!/usr/bin/env node
import { runCli } from './program.js';

process.exitCode = await runCli(process.argv.slice(2), {
  env: process.env,
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  interruptSignal() {
    const interrupted = new AbortController();
    // Once: the second Ctrl-C finds no listener and ends the process the default way.
    process.once('SIGINT', () => interrupted.abort());
    return interrupted.signal;
  },
});
