/**
 * The console's shell: sign-in until there is a token, then the navigation and the page the
 * URL names. A 401 from any call forgets the token and shows the sign-in again with the
 * API's reason.
 */
import { useMemo, useState } from 'preact/hooks';
import { AdminApi } from './api';
import { ApiContext } from './api-context';
import { Link, useRoute } from './navigation';
import { hrefs, type Page, type Route } from './route';
import { forgetToken, readToken, saveToken } from './session';
import { Charts } from './pages/charts';
import { DeadLetters } from './pages/dead-letters';
import { DeliveryLog } from './pages/delivery-log';
import { Destinations } from './pages/destinations';
import { LiveTail } from './pages/live-tail';
import { MessageView } from './pages/message';
import { SignIn } from './pages/sign-in';

const NAV: ReadonlyArray<{ page: Page; label: string; href: string }> = [
  { page: 'destinations', label: 'Sources & destinations', href: hrefs.destinations() },
  { page: 'log', label: 'Delivery log', href: hrefs.log() },
  { page: 'tail', label: 'Live tail', href: hrefs.tail() },
  { page: 'dead-letters', label: 'Dead letters', href: hrefs.deadLetters() },
  { page: 'charts', label: 'Charts', href: hrefs.charts() },
];

function activePage(route: Route): Page {
  return route.page === 'message' ? 'log' : route.page;
}

function PageFor({ route }: { route: Route }) {
  switch (route.page) {
    case 'destinations':
      return <Destinations />;
    case 'log':
      // Keyed by the URL's filters: a new search (or the back button) starts the page afresh.
      return <DeliveryLog key={JSON.stringify(route.params)} params={route.params} />;
    case 'message':
      return <MessageView messageId={route.messageId} />;
    case 'tail':
      return <LiveTail />;
    case 'dead-letters':
      return <DeadLetters key={JSON.stringify(route.params)} params={route.params} />;
    case 'charts':
      return <Charts params={route.params} />;
    case 'not-found':
      return (
        <section class="panel">
          <h2>No such page</h2>
          <p>
            The console has no page at <code>{route.path}</code>. <Link href={hrefs.destinations()}>Go to sources and destinations</Link>.
          </p>
        </section>
      );
  }
}

export function App() {
  const [token, setToken] = useState<string | null>(() => readToken(window.sessionStorage));
  const [signedOutBecause, setSignedOutBecause] = useState<string | null>(null);
  const route = useRoute();

  const api = useMemo(
    () =>
      token
        ? new AdminApi({
            token,
            onUnauthorized: (error) => {
              forgetToken(window.sessionStorage);
              setSignedOutBecause(error.message);
              setToken(null);
            },
          })
        : null,
    [token],
  );

  if (!api) {
    return (
      <SignIn
        reason={signedOutBecause}
        onSignedIn={(accepted) => {
          saveToken(window.sessionStorage, accepted);
          setSignedOutBecause(null);
          setToken(accepted);
        }}
      />
    );
  }

  const signOut = () => {
    forgetToken(window.sessionStorage);
    setSignedOutBecause(null);
    setToken(null);
  };
  const active = activePage(route);
  return (
    <ApiContext.Provider value={api}>
      <header class="top">
        <span class="brand">Tributary</span>
        <nav aria-label="Console pages">
          {NAV.map((item) => (
            <Link key={item.page} href={item.href} class={item.page === active ? 'active' : undefined} aria-current={item.page === active ? 'page' : undefined}>
              {item.label}
            </Link>
          ))}
        </nav>
        <button type="button" class="link sign-out" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main class="content">
        <PageFor route={route} />
      </main>
    </ApiContext.Provider>
  );
}
