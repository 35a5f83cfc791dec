/**
 * Steps a person takes in the web console, for the browser tests: sign in, open a page from
 * the navigation, wait for text to show. Each waits with a deadline and fails with what it
 * was waiting for.
 */
import type { Locator, Page } from 'playwright-core';

export async function signIn(page: Page, ingestUrl: string, token: string): Promise<void> {
  await page.goto(`${ingestUrl}/console/`);
  await page.getByLabel('Admin token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Console pages' }).waitFor({ timeout: 15_000 });
}

export async function openPage(page: Page, label: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Console pages' }).getByRole('link', { name: label }).click();
}

/** Waits until `locator` has an element whose text matches, and returns that element. */
export async function waitForText(locator: Locator, text: string | RegExp, timeoutMs = 15_000): Promise<Locator> {
  const match = locator.filter({ hasText: text }).first();
  try {
    await match.waitFor({ timeout: timeoutMs });
  } catch (error) {
    const shown = (await locator.allInnerTexts().catch(() => [])).join(' | ').slice(0, 2_000);
    throw new Error(`timed out after ${timeoutMs} ms waiting for ${String(text)}; the page shows: ${shown || '(nothing matching the locator)'}`, { cause: error });
  }
  return match;
}

/** Waits until `locator` shows, failing with `what` it was waiting for. */
export async function waitShown(locator: Locator, what: string, timeoutMs = 15_000): Promise<Locator> {
  try {
    await locator.first().waitFor({ timeout: timeoutMs });
  } catch (error) {
    throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`, { cause: error });
  }
  return locator.first();
}
