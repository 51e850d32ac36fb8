// JSON Schema helpers for the host page: `$ref: "#/types/X"` against the manifest's types, and
// what an input or output schema says about the shape of its data.

/** The schema with a top-level `#/types/...` (or `#/definitions/...`) reference followed. */
export function resolveSchema(schema, manifest, depth = 0) {
  if (!schema || typeof schema !== 'object' || depth > 16) return schema;
  if (typeof schema.$ref === 'string') {
    const m = /^#\/(types|definitions|\$defs)\/(.+)$/.exec(schema.$ref);
    if (m) {
      const bag = m[1] === 'types' ? manifest && manifest.types : manifest && manifest[m[1]];
      const name = decodeURIComponent(m[2]).replace(/~1/g, '/').replace(/~0/g, '~');
      const target = bag && Object.prototype.hasOwnProperty.call(bag, name) ? bag[name] : null;
      if (target) {
        const { $ref, ...rest } = schema;
        return resolveSchema({ ...target, ...rest }, manifest, depth + 1);
      }
    }
  }
  return schema;
}

/** The first non-null type a schema names ('string', 'object', ...), or null. */
export function mainType(schema) {
  if (!schema || typeof schema !== 'object') return null;
  const t = schema.type;
  if (typeof t === 'string') return t;
  if (Array.isArray(t)) return t.find((x) => x !== 'null') || null;
  if (Array.isArray(schema.enum)) return 'enum';
  if (schema.properties) return 'object';
  if (schema.items) return 'array';
  return null;
}

/** The required property names of an (input) schema. */
export function requiredOf(schema) {
  return schema && Array.isArray(schema.required) ? schema.required : [];
}

/** The endpoint's input schema, resolved; null when it declares none. */
export function inputSchemaOf(endpoint, manifest) {
  const s = endpoint && endpoint.schema && endpoint.schema.input;
  return s ? resolveSchema(s, manifest) : null;
}

export function outputSchemaOf(endpoint, manifest) {
  const s = endpoint && endpoint.schema && endpoint.schema.output;
  return s ? resolveSchema(s, manifest) : null;
}

/** An endpoint that can be called with no input: no input schema, or one requiring nothing. */
export function needsNoInput(endpoint, manifest) {
  const s = inputSchemaOf(endpoint, manifest);
  return !s || requiredOf(s).length === 0;
}
