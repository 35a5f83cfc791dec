/**
 * Unions of several records as plain objects. avsc can only represent a union with more
 * than one record branch in wrapped form (`{"io.tributary.v1.Source": {...}}`), so without
 * this `codec.encode(topics.config, {entity: source, …})` throws and a decoded ConfigEntry
 * has a wrapper object where `ConfigEntry.entity` promises a Source or a Destination.
 *
 * `recordUnionHook` (an avsc `typeHook`) gives such unions a logical type over the wrapped
 * union: the bytes on the wire are the standard Avro union (any other reader sees the same
 * record), and the branch is chosen by which record schema the value matches exactly
 * (no undeclared fields), so Source and Destination never collide.
 */
import avro from 'avsc';

function isRecordSchema(schema: unknown): boolean {
  return typeof schema === 'object' && schema !== null && (schema as { type?: unknown }).type === 'record';
}

class RecordUnionType extends avro.types.LogicalType {
  private get branches(): avro.Type[] {
    return (this.underlyingType as avro.types.WrappedUnionType).types;
  }

  // avsc declares these hooks with `any`; the wrapped value is `{ <branch name>: record }`.
  protected override _fromValue(wrapped: Record<string, unknown> | null): unknown {
    return wrapped === null ? null : Object.values(wrapped)[0];
  }

  protected override _toValue(value: unknown): unknown {
    for (const branch of this.branches) {
      if (branch.isValid(value, { noUndeclaredFields: true })) {
        return branch.branchName === 'null' ? null : { [branch.branchName ?? '']: value };
      }
    }
    return undefined;
  }

  /**
   * Reading a record written with another version of the schema: avsc hands this the
   * value as the writer's type read it, so it is re-read through a resolver into our
   * reader branches. Only happens while schemas evolve; the common path has no resolver.
   */
  protected override _resolve(writer: avro.Type): (value: unknown) => unknown {
    const resolver = this.underlyingType.createResolver(writer);
    return (value) => this._fromValue(this.underlyingType.fromBuffer(writer.toBuffer(value), resolver) as Record<string, unknown> | null);
  }
}

export const recordUnionHook = (schema: avro.Schema, options: avro.ForSchemaOptions): avro.Type | undefined => {
  if (!Array.isArray(schema) || schema.filter(isRecordSchema).length < 2) return undefined;
  // The underlying type is built without this hook (it would recurse) and with avsc's
  // default union handling, which wraps exactly this ambiguous union.
  return new RecordUnionType(schema, { ...options, typeHook: undefined });
};
