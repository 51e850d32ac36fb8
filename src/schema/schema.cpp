#include "schema/schema.hpp"

// own_keywords.hpp comes first: it checks that valijson is configured to throw.
#include <algorithm>
#include <cassert>
#include <exception>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <valijson/adapters/boost_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validation_visitor.hpp>

#include "schema/defaults.hpp"
#include "schema/ecma_regex.hpp"
#include "schema/metaschema.hpp"
#include "schema/own_keywords.hpp"
#include "schema/schema_walk.hpp"
#include "schema/testing.hpp"
#include "schema/violations.hpp"

namespace hearth::schema {
namespace {

using valijson::adapters::BoostJsonAdapter;

/// The member of the compiled document that holds the manifest's types, so that valijson's own
/// JSON-pointer resolution finds `#/types/Name`. Not a JSON Schema keyword, so it is inert.
constexpr std::string_view kTypesMember = "types";

/// The one other document a `$ref` may name: the draft-07 meta-schema ("any JSON Schema"). hearth
/// has it built in, so nothing is fetched.
constexpr std::string_view kMetaSchemaUri = "http://json-schema.org/draft-07/schema";

// --- numbers ----------------------------------------------------------------------------------

// valijson's adapter has no notion of unsigned 64-bit numbers (Boost.JSON's uint64, used above
// INT64_MAX): comparisons with them throw. As doubles they compare correctly (to double precision).
bool has_uint64(const json::value& v) {
  switch (v.kind()) {
    case json::kind::uint64:
      return true;
    case json::kind::array:
      for (const json::value& item : v.get_array()) {
        if (has_uint64(item)) return true;
      }
      return false;
    case json::kind::object:
      for (const auto& member : v.get_object()) {
        if (has_uint64(member.value())) return true;
      }
      return false;
    default:
      return false;
  }
}

/// A copy of `v` for valijson: uint64 numbers as doubles and, inside the objects listed in
/// `schema_nodes`, the keywords hearth implements itself renamed to their custom names.
json::value engine_copy(const json::value& v,
                        const std::unordered_set<const json::value*>& schema_nodes) {
  switch (v.kind()) {
    case json::kind::uint64:
      return static_cast<double>(v.get_uint64());
    case json::kind::array: {
      json::array out;
      out.reserve(v.get_array().size());
      for (const json::value& item : v.get_array()) out.push_back(engine_copy(item, schema_nodes));
      return out;
    }
    case json::kind::object: {
      const json::object& in = v.get_object();
      // valijson follows a `$ref` and ignores its siblings, so those are left as they are.
      const bool rename = schema_nodes.contains(&v) && !in.contains("$ref");
      json::object out;
      out.reserve(in.size());
      for (const auto& member : in) {
        std::string_view key = member.key();
        if (rename && key == "type") key = detail::kTypeKeyword;
        if (rename && key == "format") key = detail::kFormatKeyword;
        if (rename && key == "pattern") key = detail::kPatternKeyword;
        if (rename && key == "uniqueItems") key = detail::kUniqueItemsKeyword;
        // Draft 4's `id` means nothing in draft 7, but valijson would change the base URI for it.
        if (rename && key == "id") key = "hearth:id";
        out.emplace(key, engine_copy(member.value(), schema_nodes));
      }
      return out;
    }
    default:
      return v;
  }
}

// --- compile-time analysis --------------------------------------------------------------------

/// Walks a schema document the way valijson will parse it (keywords and `$ref`s), to report
/// what valijson would only report as an exception without a path: dangling or remote `$ref`s
/// and invalid regular expressions. It also records which objects are schemas (for
/// engine_copy) and which types the schema uses (for the meta-schema check).
class Analyzer {
 public:
  Analyzer(const json::value& document, const json::object& types, bool allow_remote,
           Problems& problems)
      : document_(document), types_(types), allow_remote_(allow_remote), problems_(problems) {}

  void analyse(const json::value& node, const std::string& path) {
    if (!schema_nodes_.insert(&node).second) return;
    paths_.emplace(&node, path);
    order_.push_back(&node);
    if (!node.is_object()) return;
    if (const json::value* ref = json::member(node, "$ref")) {
      if (ref->is_string()) follow_ref(std::string(ref->get_string()), join_path(path, "$ref"));
      return;
    }
    if (const json::value* pattern = json::member(node, "pattern");
        pattern && pattern->is_string()) {
      check_regex(pattern->get_string(), join_path(path, "pattern"));
    }
    if (const json::value* patterns = json::member(node, "patternProperties");
        patterns != nullptr && patterns->is_object()) {
      for (const auto& member : patterns->get_object()) {
        // valijson keeps only the text of these; it finds the compiled form in the shared table.
        if (check_regex(member.key(),
                        join_path(join_path(path, "patternProperties"), member.key()))) {
          detail::shared_regex(std::string(member.key()));
        }
      }
    }
    detail::for_each_subschema(
        node, path, [this](const json::value& child, const std::string& p) { analyse(child, p); });
  }

  /// Reports loops that validation would follow forever: a schema that reaches itself through
  /// `$ref`, allOf/anyOf/oneOf, not, if/then/else or schema dependencies, which all apply to the
  /// same value, without passing through a keyword that descends into a member or item.
  /// ({"A": {"allOf": [{"$ref": "#/types/A"}]}} would overflow the stack on the first request.)
  void check_cycles() {
    std::unordered_map<const json::value*, bool> finished;  // false: on the current DFS path
    // In discovery order, from the root, so that the report is the same on every run.
    for (const json::value* node : order_) visit_in_place(node, finished);
  }

  const std::unordered_set<const json::value*>& schema_nodes() const { return schema_nodes_; }
  const std::vector<std::string>& used_types() const { return used_types_; }

 private:
  void follow_ref(const std::string& ref, const std::string& path) {
    if (ref.empty() || ref.front() != '#') {
      if (!allow_remote_ && std::string_view(ref).substr(0, ref.find('#')) != kMetaSchemaUri) {
        problems_.push_back({path, "'" + ref +
                                       "' refers to another document; hearth never fetches "
                                       "schemas (declare the type in 'types' and use "
                                       "'#/types/Name')"});
      }
      return;
    }
    const auto tokens = detail::parse_pointer(std::string_view(ref).substr(1));
    if (!tokens) {
      problems_.push_back(
          {path, "'" + ref + "' is not a JSON pointer ('#/types/Name', '#/definitions/x')"});
      return;
    }
    if (!tokens->empty() && (*tokens)[0] == kTypesMember) {
      if (tokens->size() < 2 || !types_.contains((*tokens)[1])) {
        problems_.push_back({path, "'" + ref + "' does not name a type in 'types'"});
        return;
      }
      const std::string& name = (*tokens)[1];
      if (std::find(used_types_.begin(), used_types_.end(), name) == used_types_.end()) {
        used_types_.push_back(name);
      }
    }
    const json::value* target = detail::resolve_pointer(document_, *tokens);
    if (target == nullptr) {
      problems_.push_back({path, "'" + ref + "' does not point to anything in the schema"});
      return;
    }
    analyse(*target, detail::pointer_path(document_, *tokens));
  }

  /// The schemas `node` applies to its own value, each with the keyword that leads there.
  std::vector<std::pair<const json::value*, std::string>> in_place_children(
      const json::value& node) {
    std::vector<std::pair<const json::value*, std::string>> out;
    const json::object* obj = node.if_object();
    if (obj == nullptr) return out;
    if (const json::value* ref = obj->if_contains("$ref")) {
      // Only local references can loop back: other documents are never compiled with this one.
      if (!ref->is_string() || !ref->get_string().starts_with("#")) return out;
      const auto tokens = detail::parse_pointer(std::string_view(ref->get_string()).substr(1));
      if (const json::value* target =
              tokens ? detail::resolve_pointer(document_, *tokens) : nullptr) {
        out.emplace_back(target, "$ref");
      }
      return out;
    }
    for (const char* keyword : {"allOf", "anyOf", "oneOf"}) {
      if (const json::value* list = obj->if_contains(keyword); list && list->is_array()) {
        for (std::size_t i = 0; i < list->get_array().size(); ++i) {
          out.emplace_back(&list->get_array()[i], index_path(keyword, i));
        }
      }
    }
    for (const char* keyword : {"not", "if", "then", "else"}) {
      if (const json::value* child = obj->if_contains(keyword)) out.emplace_back(child, keyword);
    }
    if (const json::value* deps = obj->if_contains("dependencies"); deps && deps->is_object()) {
      for (const auto& member : deps->get_object()) {
        if (member.value().is_object()) {
          out.emplace_back(&member.value(), join_path("dependencies", member.key()));
        }
      }
    }
    return out;
  }

  void visit_in_place(const json::value* node,
                      std::unordered_map<const json::value*, bool>& finished) {
    if (!finished.emplace(node, false).second) return;
    for (const auto& [child, keyword] : in_place_children(*node)) {
      const auto state = finished.find(child);
      if (state != finished.end() && !state->second) {
        const auto path = paths_.find(node);
        problems_.push_back({join_path(path != paths_.end() ? path->second : "", keyword),
                             "leads back to a schema it is part of without descending into the "
                             "value: validation would never end"});
        continue;
      }
      visit_in_place(child, finished);
    }
    finished[node] = true;
  }

  /// Whether `pattern` compiles (ECMA-262 translated to RE2); a problem at `path` if not.
  bool check_regex(std::string_view pattern, const std::string& path) {
    std::string error;
    if (detail::Regex::compile(pattern, error) != nullptr) return true;
    problems_.push_back({path, std::move(error)});
    return false;
  }

  const json::value& document_;
  const json::object& types_;
  const bool allow_remote_;
  Problems& problems_;
  std::unordered_set<const json::value*> schema_nodes_;
  std::unordered_map<const json::value*, std::string> paths_;  ///< where each was first reached
  std::vector<const json::value*> order_;                      ///< schema_nodes_ as discovered
  std::vector<std::string> used_types_;
};

// --- the compiled schema ----------------------------------------------------------------------

class Draft7Schema final : public Schema {
 public:
  Draft7Schema(std::unique_ptr<const valijson::Schema> engine, json::value document)
      : engine_(std::move(engine)), document_(std::move(document)) {}

  std::vector<Violation> validate(const json::value& instance) const override {
    if (has_uint64(instance)) return validate_prepared(engine_copy(instance, {}));
    return validate_prepared(instance);
  }

  void apply_defaults(json::value& instance) const override {
    detail::apply_defaults(document_, document_, instance);
  }

 private:
  std::vector<Violation> validate_prepared(const json::value& instance) const {
    valijson::ValidationResults results;
    // hearth's copy of valijson's visitor matches patterns with RE2 and caches nothing per call.
    valijson::NoRegexCache regex_cache;
    const BoostJsonAdapter target(instance);
    valijson::ValidationVisitor<BoostJsonAdapter> visitor(target, {"<root>"}, /*strictTypes=*/true,
                                                          &results, regex_cache);
    bool valid = false;
    try {
      valid = visitor.validateSchema(*engine_);
    } catch (const std::exception& e) {
      // Not expected (the compiler rules out what makes valijson throw), but the request path
      // never throws: report it as a violation.
      return {Violation{"", "schema", std::string("could not be checked: ") + e.what()}};
    }
    if (valid) return {};
    std::vector<detail::EngineError> errors;
    errors.reserve(results.numErrors());
    for (const auto& error : results) errors.push_back({error.context, error.description});
    std::vector<Violation> violations = detail::to_violations(errors, instance);
    // valijson says nothing when a `false` schema or `propertyNames` fails at the root.
    if (violations.empty()) violations.push_back({"", "schema", "does not match the schema"});
    return violations;
  }

  std::unique_ptr<const valijson::Schema> engine_;
  json::value document_;  ///< the schema as written, with `types` at its root (for defaults)
};

// --- compiling --------------------------------------------------------------------------------

std::shared_ptr<const Schema> compile_schema(const json::value& schema, const json::object& types,
                                             Problems& problems,
                                             const testing::RemoteLoader* remotes, bool check_meta);

const json::value& metaschema_document() {
  static const json::value document = json::parse(detail::kDraft7MetaSchema);
  return document;
}

/// A document a `$ref` names, prepared for valijson like the main one (as far as its schema
/// objects can be found from its root), or nullptr.
const json::value* fetch_document(const std::string& uri, const testing::RemoteLoader* remotes) {
  std::optional<json::value> doc;
  if (uri == kMetaSchemaUri) {
    doc = metaschema_document();
  } else if (remotes != nullptr) {
    doc = (*remotes)(uri);
  }
  if (!doc) return nullptr;
  Problems ignored;  // whatever is wrong in it, valijson reports while parsing it
  const json::object no_types;
  Analyzer analyzer(*doc, no_types, /*allow_remote=*/true, ignored);
  analyzer.analyse(*doc, "");
  return new json::value(engine_copy(*doc, analyzer.schema_nodes()));
}

/// The compiled draft-07 meta-schema, built once.
const Schema* metaschema() {
  static const std::shared_ptr<const Schema> compiled = [] {
    Problems problems;
    std::shared_ptr<const Schema> s =
        compile_schema(metaschema_document(), {}, problems, nullptr, false);
    assert(s != nullptr && problems.empty());
    return s;
  }();
  return compiled.get();
}

/// Reports where `schema` breaks the meta-schema, one problem per place (the first reason).
void check_against_metaschema(const json::value& schema, const std::string& base,
                              Problems& problems) {
  const Schema* meta = metaschema();
  if (meta == nullptr) return;
  const std::vector<Violation> violations = meta->validate(schema);
  // A place that is only wrong because something inside it is (the anyOf of `items` failing
  // because items[0].maximum is a string) is left to the deeper report.
  const auto has_deeper = [&violations](const std::string& field) {
    return std::any_of(violations.begin(), violations.end(), [&field](const Violation& other) {
      const std::string& f = other.field;
      return f.size() > field.size() && f.starts_with(field) &&
             (field.empty() || f[field.size()] == '.' || f[field.size()] == '[');
    });
  };
  std::vector<std::string> reported;
  for (const Violation& violation : violations) {
    if (std::find(reported.begin(), reported.end(), violation.field) != reported.end()) continue;
    if (has_deeper(violation.field)) continue;
    reported.push_back(violation.field);
    std::string path = base;
    if (!violation.field.empty()) {
      path = violation.field.front() == '[' ? base + violation.field
                                            : join_path(base, violation.field);
    }
    problems.push_back({std::move(path), violation.message});
  }
}

std::shared_ptr<const Schema> compile_schema(const json::value& schema, const json::object& types,
                                             Problems& problems,
                                             const testing::RemoteLoader* remotes,
                                             bool check_meta) {
  const std::size_t problems_before = problems.size();

  json::value document = schema;
  if (json::object* root = document.if_object()) (*root)[kTypesMember] = types;

  Analyzer analyzer(document, types, remotes != nullptr, problems);
  analyzer.analyse(document, "");
  analyzer.check_cycles();
  if (check_meta) {
    check_against_metaschema(schema, "", problems);
    for (const std::string& name : analyzer.used_types()) {
      check_against_metaschema(types.at(name), join_path(kTypesMember, name), problems);
    }
  }
  if (problems.size() > problems_before) return nullptr;

  const json::value engine_document = engine_copy(document, analyzer.schema_nodes());
  try {
    valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
    detail::add_own_keywords(parser);
    auto engine = std::make_unique<valijson::Schema>();
    const BoostJsonAdapter adapter(engine_document);
    // valijson owns what fetch returns until it calls the free function.
    parser.populateSchema<BoostJsonAdapter>(
        adapter, *engine,
        [remotes](const std::string& uri) { return fetch_document(uri, remotes); },
        [](const json::value* doc) { delete doc; });
    return std::make_shared<Draft7Schema>(std::move(engine), std::move(document));
  } catch (const std::exception& e) {
    // Start-up path: whatever valijson still objects to becomes a problem, never a crash.
    problems.push_back({"", std::string("is not a usable JSON Schema: ") + e.what()});
    return nullptr;
  }
}

class Draft7Compiler final : public Compiler {
 public:
  explicit Draft7Compiler(testing::RemoteLoader remotes) : remotes_(std::move(remotes)) {}

  std::shared_ptr<const Schema> compile(const json::value& schema, const json::object& types,
                                        Problems& problems) const override {
    return compile_schema(schema, types, problems, remotes_ ? &remotes_ : nullptr,
                          /*check_meta=*/true);
  }

 private:
  testing::RemoteLoader remotes_;  ///< empty: remote references are problems
};

}  // namespace

std::unique_ptr<Compiler> make_draft7_compiler() {
  return std::make_unique<Draft7Compiler>(nullptr);
}

namespace testing {

std::unique_ptr<Compiler> make_draft7_compiler_with_remotes(RemoteLoader loader) {
  return std::make_unique<Draft7Compiler>(std::move(loader));
}

}  // namespace testing
}  // namespace hearth::schema
