#pragma once
/// Validation of LAFS envelopes with the semantics of schemas/v1/envelope.schema.json (draft-07),
/// implemented here rather than read from a file: the schema is fixed by the protocol version, and
/// walking the document directly is several times faster than a generic engine. The reference
/// validator (ajv 8 + ajv-formats, allErrors) and this one agree on every fixture and on generated
/// mutations of them (tests/lafs, the differential test).

#include <string>
#include <vector>

#include "json/json.hpp"

namespace hearth::lafs {

/// The envelope schema's `$id`, also the value `$schema` must hold.
inline constexpr std::string_view kEnvelopeSchemaId =
    "https://lafs.dev/schemas/v1/envelope.schema.json";

/// One way a document breaks the schema, in ajv's terms so reports read the same.
struct SchemaError {
  std::string path;     ///< JSON Pointer of the instance location: "" (root), "/_meta/mvi"
  std::string keyword;  ///< the failing keyword: "required", "type", "const", "then", ...
  std::string message;  ///< "must have required property 'nextCursor'"

  std::string to_string() const { return (path.empty() ? "/" : path) + " " + message; }
};

/// Every schema error of `envelope` (empty when it is a valid envelope). Never throws.
std::vector<SchemaError> validate_envelope_schema(const json::value& envelope);

/// Same answer as validate_envelope_schema(...).empty(), stopping at the first error.
bool envelope_schema_valid(const json::value& envelope);

/// Every error of `ledger` against schemas/v1/context-ledger.schema.json (also built in).
std::vector<SchemaError> validate_context_ledger_schema(const json::value& ledger);

/// JSON Schema's "integer": an integral JSON number, whether written 3 or 3.0 (as ajv sees it).
bool is_integer(const json::value& v);

}  // namespace hearth::lafs
