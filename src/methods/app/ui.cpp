#include "methods/app/ui.hpp"

#include "rpc/params.hpp"

namespace hearth::methods::app {
namespace asio = boost::asio;
using rpc::Request;

namespace {

std::uint64_t session_of(const Request& request) {
  return request.session ? request.session->id() : 0;
}

/// The mount a request names; a missing or non-string mountId names none (the host says which).
std::string mount_id_of(const Request& request) {
  const json::value* id = json::member(request.params, "mountId");
  return id != nullptr && id->is_string() ? std::string(id->get_string()) : std::string();
}

asio::awaitable<Result<json::value>> ui_open(appui::AppUiHost& ui, const Request& request) {
  return ui.open_mount(request.session, json::string_member(request.params, "appId"),
                       json::string_member(request.params, "entryKey"),
                       json::string_member(request.params, "workspaceId"));
}

asio::awaitable<Result<json::value>> ui_close(appui::AppUiHost& ui, const Request& request) {
  co_return ui.close_mount(session_of(request), mount_id_of(request));
}

asio::awaitable<Result<json::value>> ui_invoke(appui::AppUiHost& ui, const Request& request) {
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, rpc::params_object(request));
  agentapp::Invocation call;
  HEARTH_CO_ASSIGN_OR_RETURN(call.capability, rpc::required_string(*params, "capability"));
  HEARTH_CO_ASSIGN_OR_RETURN(call.method, rpc::required_string(*params, "method"));
  HEARTH_CO_ASSIGN_OR_RETURN(auto workspace, rpc::string_param(*params, "workspaceId", false));
  call.workspace = workspace.value_or("");
  if (const auto* p = params->if_contains("params"); p != nullptr && !p->is_null()) {
    if (!p->is_object()) co_return rpc::invalid_param("params must be an object", "params", "type");
    call.params = *p;
  }
  co_return co_await ui.invoke(session_of(request), mount_id_of(request), std::move(call));
}

}  // namespace

void add_ui_methods(rpc::Dispatcher& dispatcher, appui::AppUiHost& ui) {
  dispatcher.add("app/ui/entries", [&ui](const Request&) { return ui.list_entries(); });
  dispatcher.add("app/ui/open", [&ui](const Request& r) { return ui_open(ui, r); });
  dispatcher.add("app/ui/close", [&ui](const Request& r) { return ui_close(ui, r); });
  dispatcher.add("app/ui/invoke", [&ui](const Request& r) { return ui_invoke(ui, r); });
}

}  // namespace hearth::methods::app
