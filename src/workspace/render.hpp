#pragma once
/// The model's view of a workspace (docs/workspace.md, "Rendering"): every public state with its
/// permission, its schema as a compact type, what a change does and its current value (hidden
/// for write-only states), then the guide: the utilities' signatures, the usage examples, the
/// tools and the rules of a script. Three forms: `text` (aligned boxes), `markdown` and `json`.
/// A size budget keeps the view within a model's context: values too large for their share are
/// cut with a note that says so. No I/O.

#include <cstddef>
#include <cstdint>
#include <string>

#include "json/json.hpp"
#include "workspace/definition.hpp"

namespace hearth::workspace {

enum class Format : std::uint8_t { kText, kMarkdown, kJson };

struct RenderOptions {
  Format format = Format::kText;
  bool guide = true;           ///< the utilities, examples, tools and rules
  std::size_t budget = 24000;  ///< characters (text, markdown) the view aims to stay within
};

/// The compact type of a JSON Schema: `{ search_pattern: string (≤300), tags?: string[] }`.
std::string compact_type(const json::value& schema, const json::object& types = {});

/// The view. For kJson, the JSON text of the view object.
std::string render(const Definition& def, std::int64_t version, const json::object& state,
                   const RenderOptions& options);

/// The view object of kJson.
json::object render_json(const Definition& def, std::int64_t version, const json::object& state,
                         const RenderOptions& options);

/// Columns a string takes in a terminal (East Asian wide characters count two).
std::size_t display_width(std::string_view text);

}  // namespace hearth::workspace
