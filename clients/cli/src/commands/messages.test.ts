import { describe, expect, it } from 'vitest';
import { messagePath } from './messages.js';

describe('messagePath', () => {
  it('puts an ordinary id in the path, encoded', () => {
    expect(messagePath('4f1c-a/b c')).toBe('/messages/4f1c-a%2Fb%20c');
  });

  it('sends the dot-segment ids as a query parameter, which URL parsing cannot resolve away', () => {
    expect(messagePath('.')).toBe('/messages/by-id?messageId=.');
    expect(messagePath('..')).toBe('/messages/by-id?messageId=..');
    // Resolved as a path, "/admin/v1/messages/.." would be "/admin/v1/".
    expect(new URL(`/admin/v1${messagePath('..')}`, 'http://127.0.0.1').pathname).toBe('/admin/v1/messages/by-id');
  });
});
