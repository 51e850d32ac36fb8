// lime.storage: the app's own key-value pairs and SQL, in its database (AppData).
#include "agentapp/bridge/capability.hpp"
#include "common/ascii.hpp"

namespace hearth::agentapp {
namespace {

bool is_select(std::string_view sql) {
  std::size_t i = 0;
  while (i < sql.size() && (sql[i] == ' ' || sql[i] == '\t' || sql[i] == '\n' || sql[i] == '\r')) {
    ++i;
  }
  return ascii::iequals(sql.substr(i, 6), "select");
}

class StorageCapability final : public Capability {
 public:
  std::string_view name() const override { return "lime.storage"; }

  const std::vector<Method>& methods() const override {
    static const std::vector<Method> kMethods = {{"get", {"storage", "read"}},
                                                 {"put", {"storage", "write"}},
                                                 {"query", {"storage", "read"}}};
    return kMethods;
  }

  /// A query that is not a SELECT may write: it needs write access.
  Permission needs(const Method& method, const Invocation& call) const override {
    Permission needed = method.needs;
    if (method.name == "query" && call.params.is_object()) {
      const auto* sql = call.params.get_object().if_contains("sql");
      if (sql != nullptr && sql->is_string() && !sql->get_string().empty() &&
          !is_select(sql->get_string())) {
        needed.access = "write";
      }
    }
    return needed;
  }

  Result<json::value> invoke(CallContext& context) const override {
    const std::string& method = context.call.method;
    if (method == "get") return get(context);
    if (method == "put") return put(context);
    return query(context);
  }

 private:
  static Result<json::value> get(CallContext& context) {
    HEARTH_ASSIGN_OR_RETURN(auto key, context.string_param("key"));
    context.summary["key"] = key;
    HEARTH_ASSIGN_OR_RETURN(auto value, context.data.get(key));
    return json::value(json::object{{"key", key}, {"value", std::move(value)}});
  }

  static Result<json::value> put(CallContext& context) {
    HEARTH_ASSIGN_OR_RETURN(auto key, context.string_param("key"));
    context.summary["key"] = key;
    const auto* value = context.param("value");
    if (value == nullptr) {
      return Error::make(ErrorCode::kInvalidParams, "lime.storage.put: params.value is required");
    }
    HEARTH_RETURN_IF_ERROR(context.data.put(key, *value));
    return json::value(json::object{{"key", key}, {"stored", true}});
  }

  static Result<json::value> query(CallContext& context) {
    HEARTH_ASSIGN_OR_RETURN(auto sql, context.string_param("sql"));
    const auto* params = context.param("params");
    static const json::array kNone;
    const json::array& bound =
        params != nullptr && params->is_array() ? params->get_array() : kNone;
    context.summary["sql"] = sql;
    HEARTH_ASSIGN_OR_RETURN(auto rows, context.data.query(sql, bound));
    context.summary["rows"] = static_cast<std::int64_t>(rows.size());
    return json::value(json::object{{"rows", std::move(rows)}});
  }
};

}  // namespace

std::unique_ptr<Capability> make_storage_capability() {
  return std::make_unique<StorageCapability>();
}

}  // namespace hearth::agentapp
