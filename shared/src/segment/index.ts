/**
 * The Segment message model as Tributary accepts it — validation, normalisation into an
 * IngestMessage, the record key — shared by ingest (over HTTP) and @tributary/producer (to
 * the ingest topic directly), so both accept and write exactly the same things.
 */
export * from './api-error.js';
export * from './auth.js';
export * from './clock-skew.js';
export * from './echo.js';
export * from './free-form-depth.js';
export * from './json-body.js';
export * from './json-objects.js';
export * from './normalise.js';
export * from './segment-call.js';
export * from './timestamps.js';
export * from './validation.js';
