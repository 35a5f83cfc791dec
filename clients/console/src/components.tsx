/** The small pieces every page uses: states (loading, empty, error), badges, times, JSON. */
import type { ComponentChildren } from 'preact';
import { ApiError } from './api';
import { formatRelative, formatTime, toneOf, type Tone } from './format';

export function Loading({ what }: { what: string }) {
  return (
    <p class="state loading" role="status">
      Loading {what}…
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="state empty">{children}</p>;
}

/** An error as the API worded it, with its code, so an operator can look it up. */
export function ErrorNote({ error, context }: { error: Error; context?: string }) {
  const code = error instanceof ApiError ? error.code : undefined;
  const issues = error instanceof ApiError ? error.issues : [];
  return (
    <div class="state error" role="alert">
      <strong>{context ? `${context}: ` : ''}</strong>
      <span class="error-text">{error.message}</span>
      {code && code !== 'http_error' ? <code class="error-code">{code}</code> : null}
      {issues.length > 0 ? (
        <ul>
          {issues.map((issue) => (
            <li key={issue.path}>
              <code>{issue.path}</code>: {issue.message}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

export function Badge({ tone, children, title }: { tone?: Tone; children: ComponentChildren; title?: string }) {
  return (
    <span class={`badge ${tone ?? 'neutral'}`} title={title}>
      {children}
    </span>
  );
}

/** A state or outcome word in its colour. */
export function StateBadge({ state, label }: { state: string | null | undefined; label?: string }) {
  return <Badge tone={toneOf(state)}>{label ?? state ?? 'unknown'}</Badge>;
}

export function Time({ iso, now }: { iso: string | null | undefined; now?: number }) {
  if (!iso) return <span class="muted">—</span>;
  return (
    <time dateTime={iso} title={now === undefined ? iso : formatTime(iso)}>
      {now === undefined ? formatTime(iso) : formatRelative(iso, now)}
    </time>
  );
}

export function JsonBlock({ value }: { value: string }) {
  return <pre class="json">{value}</pre>;
}

export function Section({ title, children, actions }: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <section class="panel">
      <header class="panel-head">
        <h2>{title}</h2>
        {actions ? <div class="actions">{actions}</div> : null}
      </header>
      {children}
    </section>
  );
}

/** "updated 3 s ago", so a page that refreshes by itself says how fresh it is. */
export function Freshness({ loadedAt, now, loading }: { loadedAt: number | undefined; now: number; loading: boolean }) {
  if (loadedAt === undefined) return null;
  return <span class="muted freshness">{loading ? 'refreshing…' : `updated ${formatRelative(new Date(loadedAt).toISOString(), now)}`}</span>;
}
