/**
 * An independent X-Signature check: Python's hmac/hashlib, run with python3 over bytes
 * passed through files (so neither the body nor the secret is re-encoded on the way).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const SCRIPT = [
  'import hashlib, hmac, sys',
  'key = open(sys.argv[1], "rb").read()',
  'data = open(sys.argv[2], "rb").read()',
  'print(hmac.new(key, data, hashlib.sha1).hexdigest())',
].join('\n');

export function pythonHmacSha1(secret: string, body: Buffer | string): string {
  const dir = mkdtempSync(join(tmpdir(), 'tributary-hmac-'));
  try {
    writeFileSync(join(dir, 'secret'), Buffer.from(secret, 'utf8'));
    writeFileSync(join(dir, 'body'), typeof body === 'string' ? Buffer.from(body, 'utf8') : body);
    return execFileSync('python3', ['-c', SCRIPT, join(dir, 'secret'), join(dir, 'body')], { encoding: 'utf8' }).trim();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
