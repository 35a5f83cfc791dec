import { describe, expect, it } from 'vitest';
import { namedSchema, responseSchema, schemaProblems, type OpenApiDocument } from './openapi.js';

const document: OpenApiDocument = {
  paths: { '/things/{id}': { get: { responses: { '200': { content: { 'application/json': { schema: namedSchema('Thing') } } }, '404': { $ref: '#/components/responses/NotFound' } } } } },
  components: {
    responses: { NotFound: { content: { 'application/json': { schema: { type: 'object', required: ['error'] } } } } },
    schemas: {
      Thing: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'at', 'rate', 'parts', 'state'],
        properties: {
          id: { type: 'string' },
          at: { type: 'string', format: 'date-time' },
          rate: { type: ['number', 'null'], minimum: 0, maximum: 1 },
          parts: { type: 'array', items: { type: 'integer' } },
          state: { enum: ['on', 'off'] },
          owner: { oneOf: [{ type: 'object', required: ['name'] }, { type: 'null' }] },
        },
      },
    },
  },
};

const thing = { id: 't', at: '2026-11-25T10:00:00.000Z', rate: 0.5, parts: [1, 2], state: 'on', owner: null };

describe('schemaProblems', () => {
  it('accepts an answer that conforms, through $refs and responses', () => {
    expect(schemaProblems(document, responseSchema(document, '/things/{id}', 200), thing)).toEqual([]);
    expect(schemaProblems(document, responseSchema(document, '/things/{id}', 404), { error: 'no' })).toEqual([]);
  });

  it('names each way an answer breaks the document, by path', () => {
    const broken = { id: 1, at: '2026-11-25T10:00:00Z', rate: 1.5, parts: [1, 'x'], state: 'maybe', owner: {}, extra: true };
    expect(schemaProblems(document, namedSchema('Thing'), broken)).toEqual([
      '$.id: 1 is not string',
      '$.at: "2026-11-25T10:00:00Z" is not an ISO-8601 UTC time with milliseconds',
      '$.rate: 1.5 is above 1',
      '$.parts[1]: "x" is not integer',
      '$.state: "maybe" is not one of on, off',
      '$.owner: matches 0 of the oneOf schemas, not exactly one ({})',
      '$.extra: is not in the document',
    ]);
    const { state: _state, ...missing } = thing;
    expect(schemaProblems(document, namedSchema('Thing'), missing)).toEqual(['$.state: is required and missing']);
    expect(() => responseSchema(document, '/things/{id}', 503)).toThrow('documents no 503 answer');
  });
});
