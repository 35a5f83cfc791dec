/**
 * The admin token for this browser tab: kept in sessionStorage, so a reload stays signed in
 * while closing the tab forgets it, and it is never written to a URL, a cookie or
 * localStorage.
 */

const TOKEN_KEY = 'tributary.adminToken';

export type TokenStorage = Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;

export function readToken(storage: TokenStorage): string | null {
  const token = storage.getItem(TOKEN_KEY);
  return token && token.trim() !== '' ? token : null;
}

export function saveToken(storage: TokenStorage, token: string): void {
  storage.setItem(TOKEN_KEY, token);
}

export function forgetToken(storage: TokenStorage): void {
  storage.removeItem(TOKEN_KEY);
}

/**
 * What the sign-in form accepts: the token itself, or a pasted `Bearer <token>` or
 * `Authorization: Bearer <token>` line. Null when nothing usable is left.
 */
export function normaliseToken(input: string): string | null {
  const token = input
    .trim()
    .replace(/^authorization:\s*/i, '')
    .replace(/^bearer(\s+|$)/i, '')
    .trim();
  return token === '' || /\s/.test(token) ? null : token;
}
