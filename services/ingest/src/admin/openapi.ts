/**
 * The admin API's OpenAPI 3.1 document. It is written by hand in
 * `services/ingest/openapi/admin.yaml` rather than generated from the zod schemas: the
 * rules that matter most to a reader (reserved headers, write-only secrets, the redaction
 * marker, the error shape and its paths) are refinements that JSON Schema generated from
 * zod cannot carry, and a reviewed file keeps its descriptions and examples. A unit test
 * holds it to the routes the plugin registers.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

/** The file, found from `src/admin/` and from `dist/admin/` alike. */
export const OPENAPI_FILE = new URL('../../openapi/admin.yaml', import.meta.url);

export type OpenApiDocument = Record<string, unknown> & { paths: Record<string, Record<string, unknown>> };

export function loadAdminOpenApi(): OpenApiDocument {
  return parse(readFileSync(OPENAPI_FILE, 'utf8')) as OpenApiDocument;
}
