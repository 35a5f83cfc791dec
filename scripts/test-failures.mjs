#!/usr/bin/env node
// What `npm test` prints last when a test failed. The workspaces' suites run one after another
// (`turbo run test --concurrency=1 --continue`), so a failure in the first of them is printed
// some twenty minutes and thousands of lines before the run ends, and a log read from its end
// shows only "@tributary/x#test exited (1)". Every workspace's vitest also writes its results as
// JSON to .tributary/test-results/ (test/vitest.shared.ts); this gathers the failures from there.
//
//   node scripts/test-failures.mjs --clear   before the suites run: forget the last run's results
//   node scripts/test-failures.mjs           after a failed run: print every failed test with
//                                            its first error lines, and exit 1
//
// Plain Node, no dependencies: it must work when the run failed before anything was built.
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..');
const RESULTS_DIR = join(root, '.tributary', 'test-results');
const ERROR_LINES = 12;

if (process.argv.includes('--clear')) {
  rmSync(RESULTS_DIR, { recursive: true, force: true });
  process.exit(0);
}

/** The workspaces with a test script: each should have left a results file. */
function workspacesWithTests() {
  const { workspaces } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const found = [];
  for (const pattern of workspaces) {
    const dirs = pattern.endsWith('/*')
      ? readdirSync(join(root, pattern.slice(0, -2)), { withFileTypes: true })
          .filter((entry) => entry.isDirectory())
          .map((entry) => join(pattern.slice(0, -2), entry.name))
      : [pattern];
    for (const dir of dirs) {
      const manifest = join(root, dir, 'package.json');
      if (!existsSync(manifest)) continue;
      const pkg = JSON.parse(readFileSync(manifest, 'utf8'));
      if (pkg.scripts?.test !== undefined) found.push(pkg.name);
    }
  }
  return found;
}

/** The error's first lines, without the test runner's and Node's own stack frames. */
function firstLines(text) {
  const lines = text.split('\n').filter((line) => !/^\s*at .*(node_modules|node:internal|<anonymous>)/.test(line));
  return lines.slice(0, ERROR_LINES).join('\n') + (lines.length > ERROR_LINES ? `\n… (${lines.length - ERROR_LINES} more lines in the workspace's own output above)` : '');
}

const lines = [];
const ran = existsSync(RESULTS_DIR) && readdirSync(RESULTS_DIR).some((file) => file.endsWith('.json'));
for (const name of ran ? workspacesWithTests() : []) {
  const file = join(RESULTS_DIR, `${name.replace('/', '+')}.json`);
  if (!existsSync(file)) {
    lines.push(`${name}: no results — its suite did not run, or vitest stopped before writing them`);
    continue;
  }
  const results = JSON.parse(readFileSync(file, 'utf8'));
  if (results.success === true && results.numFailedTests === 0) continue;
  const failedTests = [];
  for (const suite of results.testResults ?? []) {
    const path = relative(root, suite.name);
    const failed = (suite.assertionResults ?? []).filter((test) => test.status === 'failed');
    for (const test of failed) failedTests.push(`  ✗ ${path} › ${test.fullName}\n${indent(firstLines((test.failureMessages ?? []).join('\n')))}`);
    if (failed.length === 0 && suite.status === 'failed') {
      // A hook's or an import's error: vitest's JSON keeps none for a beforeAll, only the status.
      const message = (suite.message ?? '').trim();
      const why = message === '' ? `      (its error is in the workspace's output above, under "FAIL … ${path.split('/').pop()}")` : indent(firstLines(message));
      failedTests.push(`  ✗ ${path}: failed outside its tests (a beforeAll/afterAll hook or its import)\n${why}`);
    }
  }
  if (failedTests.length === 0) failedTests.push('  no failed test recorded: an unhandled error or a global set-up failed; see its output above');
  lines.push(`${name}: ${results.numFailedTests} of ${results.numTotalTests} tests failed${results.numFailedTests === 0 ? ', and a file outside its tests' : ''}`, ...failedTests);
}

function indent(text) {
  return text
    .split('\n')
    .map((line) => `      ${line}`)
    .join('\n');
}

console.error(['', '── what failed ──', ...(!ran ? ['no suite ran: the build, the lint or the test stack failed first; see above'] : lines.length > 0 ? lines : ['every workspace recorded success: what failed was outside the suites; see above']), ''].join('\n'));
process.exit(1);
