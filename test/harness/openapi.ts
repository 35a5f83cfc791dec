/**
 * Checks a real answer against the admin API's OpenAPI document (services/ingest/openapi/
 * admin.yaml), so an integration test fails when the document and the service disagree —
 * a field the code adds that the document leaves out, a type or a time format it gets wrong.
 *
 * A small validator for the JSON Schema the document uses (`$ref`, `type` with `null`,
 * `enum`, `const`, `oneOf`, `required`, `properties`, `additionalProperties: false`, `items`,
 * `minimum`/`maximum`, `format: date-time`), not a general one: the workspace has no
 * JSON Schema 2020-12 validator among its dependencies, and this one names the path of each
 * problem. Times must be what the API promises: ISO-8601 UTC with milliseconds.
 */
import { join } from 'node:path';
import { REPO_ROOT } from './services.js';

/** The document, parsed by the caller (with the `yaml` package its workspace has). */
export type OpenApiDocument = Record<string, unknown> & { paths: Record<string, Record<string, unknown>> };
type Schema = Record<string, unknown>;

export const ADMIN_OPENAPI_FILE = join(REPO_ROOT, 'services', 'ingest', 'openapi', 'admin.yaml');

function resolve(document: OpenApiDocument, node: Schema): Schema {
  let current = node;
  while (typeof current.$ref === 'string') {
    const ref = current.$ref;
    if (!ref.startsWith('#/')) throw new Error(`only local $refs are followed, not ${ref}`);
    let target: unknown = document;
    for (const part of ref.slice(2).split('/')) target = (target as Record<string, unknown> | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    if (target === undefined) throw new Error(`${ref} is not in the document`);
    current = target as Schema;
  }
  return current;
}

/** The JSON schema of a documented answer: `GET path` answering `status`. */
export function responseSchema(document: OpenApiDocument, path: string, status: number, method = 'get'): Schema {
  const operation = document.paths[path]?.[method] as { responses?: Record<string, Schema> } | undefined;
  const response = operation?.responses?.[String(status)];
  if (!response) throw new Error(`${method.toUpperCase()} ${path} documents no ${status} answer`);
  const content = resolve(document, response).content as Record<string, { schema?: Schema }> | undefined;
  const schema = content?.['application/json']?.schema;
  if (!schema) throw new Error(`${method.toUpperCase()} ${path} ${status} has no application/json schema`);
  return schema;
}

/** A schema of components/schemas by name. */
export function namedSchema(name: string): Schema {
  return { $ref: `#/components/schemas/${name}` };
}

const ISO_UTC_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function typeMatches(type: string, value: unknown): boolean {
  switch (type) {
    case 'null':
      return value === null;
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    default:
      throw new Error(`type ${type} is not known to this checker`);
  }
}

/** Every way `value` breaks `schema`, each with its path (`$.attempts[0].targets[0].status`); empty when it conforms. */
export function schemaProblems(document: OpenApiDocument, schema: Schema, value: unknown, path = '$'): string[] {
  const node = resolve(document, schema);
  if (Array.isArray(node.oneOf)) {
    const matching = (node.oneOf as Schema[]).filter((option) => schemaProblems(document, option, value, path).length === 0).length;
    if (matching !== 1) return [`${path}: matches ${matching} of the oneOf schemas, not exactly one (${JSON.stringify(value)?.slice(0, 200)})`];
  }
  if ('const' in node && value !== node.const) return [`${path}: is ${JSON.stringify(value)}, not ${JSON.stringify(node.const)}`];
  if (Array.isArray(node.enum) && !node.enum.includes(value)) return [`${path}: ${JSON.stringify(value)} is not one of ${node.enum.join(', ')}`];
  if (node.type !== undefined) {
    const types = [node.type].flat() as string[];
    if (!types.some((type) => typeMatches(type, value))) return [`${path}: ${JSON.stringify(value)?.slice(0, 200)} is not ${types.join(' or ')}`];
  }
  const problems: string[] = [];
  if (typeof value === 'string' && node.format === 'date-time' && !ISO_UTC_MS.test(value)) problems.push(`${path}: "${value}" is not an ISO-8601 UTC time with milliseconds`);
  if (typeof value === 'number') {
    if (typeof node.minimum === 'number' && value < node.minimum) problems.push(`${path}: ${value} is below ${node.minimum}`);
    if (typeof node.maximum === 'number' && value > node.maximum) problems.push(`${path}: ${value} is above ${node.maximum}`);
  }
  if (typeMatches('object', value)) {
    const object = value as Record<string, unknown>;
    const properties = (node.properties ?? {}) as Record<string, Schema>;
    for (const name of (node.required ?? []) as string[]) if (!(name in object)) problems.push(`${path}.${name}: is required and missing`);
    for (const [name, inner] of Object.entries(object)) {
      const propertySchema = properties[name];
      if (propertySchema) problems.push(...schemaProblems(document, propertySchema, inner, `${path}.${name}`));
      else if (node.additionalProperties === false) problems.push(`${path}.${name}: is not in the document`);
    }
  }
  if (Array.isArray(value) && node.items) value.forEach((item, index) => problems.push(...schemaProblems(document, node.items as Schema, item, `${path}[${index}]`)));
  return problems;
}
