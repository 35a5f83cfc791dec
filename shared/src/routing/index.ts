/**
 * The router's decisions about one message — which Webhooks destinations receive it and
 * why the others do not — as pure code, shared so that whatever reports a routing decision
 * (the delivery-log indexer) reports the router's own, not a copy that drifts from it.
 */
export * from './decide-route.js';
export * from './integrations.js';
