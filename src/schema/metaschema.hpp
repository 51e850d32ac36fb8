#pragma once
/// The draft-07 meta-schema, which the compiler checks every schema against first, so that a
/// mistake in a manifest's schema is reported at its exact path ("properties.count.minimum: must
/// be of type number, not string") instead of as an engine exception. Internal to src/schema/.

#include <string_view>

namespace hearth::schema::detail {

/// The meta-schema's JSON text.
extern const std::string_view kDraft7MetaSchema;

}  // namespace hearth::schema::detail
