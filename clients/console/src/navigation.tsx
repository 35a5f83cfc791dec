/**
 * Moving between pages without reloading: the current route from the location, links that
 * push history entries, and `navigate` for forms that change their own URL.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { parseRoute, type Route } from './route';

const NAVIGATED = 'tributary:navigated';

function currentRoute(): Route {
  return parseRoute(window.location.pathname, window.location.search);
}

export function navigate(href: string, options: { replace?: boolean } = {}): void {
  if (href === `${window.location.pathname}${window.location.search}`) return;
  if (options.replace) window.history.replaceState(null, '', href);
  else window.history.pushState(null, '', href);
  window.dispatchEvent(new Event(NAVIGATED));
  if (!options.replace) window.scrollTo(0, 0);
}

export function useRoute(): Route {
  const [route, setRoute] = useState(currentRoute);
  useEffect(() => {
    const update = () => setRoute(currentRoute());
    window.addEventListener('popstate', update);
    window.addEventListener(NAVIGATED, update);
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener(NAVIGATED, update);
    };
  }, []);
  return route;
}

interface LinkProps {
  href: string;
  children: ComponentChildren;
  class?: string | undefined;
  'aria-current'?: 'page' | undefined;
  /** Runs before the link navigates; preventDefault() stops it. */
  onClick?: (event: MouseEvent) => void;
}

/** An ordinary link (it opens in a new tab with a modifier key) that otherwise stays in the app. */
export function Link({ href, children, onClick: before, ...rest }: LinkProps) {
  const onClick = (event: MouseEvent) => {
    before?.(event);
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(href);
  };
  return (
    <a href={href} onClick={onClick} {...rest}>
      {children}
    </a>
  );
}
