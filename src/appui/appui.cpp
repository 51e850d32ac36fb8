#include "appui/appui.hpp"

#include <boost/asio/awaitable.hpp>

#include "agentapp/store/native.hpp"
#include "common/beneath.hpp"
#include "common/on_strand.hpp"
#include "common/random.hpp"
#include "common/rfc3986.hpp"
#include "rpc/session.hpp"
#include "views/component.hpp"
#include "views/document.hpp"

namespace hearth::appui {

namespace asio = boost::asio;
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kPrefix = "/apps/";

/// The app's UI package: the folder (runtimePackage.ui.path) and its entry document.
struct UiPackage {
  fs::path root;
  std::string document;
};

Result<UiPackage> ui_package(const agentapp::AppManifest& manifest, const fs::path& dir) {
  const auto* rp = manifest.front_matter.if_contains("runtimePackage");
  const auto* ui = rp != nullptr && rp->is_object() ? rp->get_object().if_contains("ui") : nullptr;
  if (ui == nullptr || !ui->is_object()) {
    return Error::make(ErrorCode::kInvalidParams, "the app has no UI (runtimePackage.ui)");
  }
  const std::string path = json::string_member(ui->get_object(), "path");
  std::string document = json::string_member(ui->get_object(), "entry");
  if (document.empty()) document = "index.html";
  std::string rel = path;
  while (rel.starts_with("./")) rel.erase(0, 2);
  while (!rel.empty() && rel.back() == '/') rel.pop_back();
  if (rel.empty() || !is_clean_relative(rel) || !is_clean_relative(document)) {
    return Error::make(ErrorCode::kInvalidParams,
                       "the app's runtimePackage.ui names a path outside its package");
  }
  return UiPackage{dir / rel, document};
}

/// The page and panel entries of the app, as the host page lists them.
json::array ui_entries(const agentapp::AppManifest& manifest) {
  json::array out;
  const auto* list = manifest.front_matter.if_contains("entries");
  if (list == nullptr || !list->is_array()) return out;
  for (const auto& e : list->get_array()) {
    if (!e.is_object()) continue;
    const auto& o = e.get_object();
    const auto kind = json::string_member(o, "kind");
    if (kind != "page" && kind != "panel") continue;
    out.emplace_back(json::object{{"key", json::string_member(o, "key")},
                                  {"kind", kind},
                                  {"title", json::string_member(o, "title")},
                                  {"route", json::string_member(o, "route")}});
  }
  return out;
}

net::HttpResponse not_found() {
  net::HttpResponse r;
  r.status = 404;
  r.content_type = "text/plain; charset=utf-8";
  r.body = "not found\n";
  return r;
}

}  // namespace

AppUiHost::AppUiHost(agentapp::AppStore& apps, agentapp::Bridge& bridge, BlockingExecutor& blocking,
                     Options options)
    : apps_(apps),
      bridge_(bridge),
      blocking_(blocking),
      options_(options),
      self_(std::make_shared<AppUiHost*>(this)) {}

AppUiHost::~AppUiHost() = default;

Status AppUiHost::add_routes(net::Routes& routes) {
  net::Route route;
  route.path = std::string(kPrefix);
  route.methods = {"GET"};
  route.access = net::Access::kOpen;  // the ticket is the capability (as for /views/)
  route.opaque_origin = true;
  route.handler = [this](net::HttpRequest request) { return serve(std::move(request)); };
  return routes.add(std::move(route));
}

Result<json::value> AppUiHost::entries() {
  HEARTH_ASSIGN_OR_RETURN(auto installed, apps_.list());
  json::array out;
  for (const auto& app : installed) {
    if (!app.enabled) continue;
    auto manifest = agentapp::read_manifest(app.dir);
    if (!manifest.ok() || !ui_package(manifest.value(), app.dir).ok()) continue;
    auto list = ui_entries(manifest.value());
    if (list.empty()) continue;
    std::string display = json::string_member(manifest.value().front_matter, "displayName");
    out.emplace_back(json::object{{"appId", app.name},
                                  {"displayName", display.empty() ? app.name : display},
                                  {"version", app.version},
                                  {"dev", app.dev()},
                                  {"entries", std::move(list)}});
  }
  return json::value(json::object{{"apps", std::move(out)}});
}

Result<json::value> AppUiHost::open(const std::shared_ptr<rpc::Session>& session,
                                    const std::string& app_id, const std::string& entry_key,
                                    const std::string& workspace) {
  if (!session || !session->can_push()) {
    return Error::make(ErrorCode::kInvalidRequest,
                       "app/ui/open needs a WebSocket: the mount ends with the connection");
  }
  if (app_id.empty() || entry_key.empty()) {
    return Error::make(ErrorCode::kInvalidParams, "app/ui/open needs appId and entryKey");
  }
  auto app = apps_.find(app_id);
  if (!app.ok()) {
    return Error::make(ErrorCode::kInvalidParams, "no app named '" + app_id + "' is installed");
  }
  if (!app.value().enabled) {
    return Error::make(ErrorCode::kPermissionDenied, "the app '" + app_id + "' is not enabled",
                       json::object{{"stage", "enabled"}});
  }
  HEARTH_ASSIGN_OR_RETURN(auto manifest, agentapp::read_manifest(app.value().dir));
  HEARTH_ASSIGN_OR_RETURN(auto ui, ui_package(manifest, app.value().dir));
  const json::object* entry = nullptr;
  const json::array listed = ui_entries(manifest);
  for (const auto& e : listed) {
    if (e.at("key") == json::value(entry_key)) entry = &e.as_object();
  }
  if (entry == nullptr) {
    return Error::make(ErrorCode::kInvalidParams,
                       "the app '" + app_id + "' has no page or panel entry '" + entry_key + "'");
  }
  Mount m;
  m.id = "appmount-" + random_hex(8);
  m.ticket = random_hex(16);
  m.app = app.value().name;
  m.version = app.value().version;
  m.entry = entry_key;
  m.route = json::string_member(*entry, "route");
  m.ui_root = ui.root;
  m.document = ui.document;
  m.session_id = session->id();
  bool hook = false;
  {
    std::lock_guard lock(mu_);
    std::size_t held = 0;
    for (const auto& [_, other] : mounts_) held += other.session_id == m.session_id ? 1 : 0;
    if (held >= options_.max_mounts_per_session) {
      return Error::make(ErrorCode::kInvalidRequest,
                         "this connection holds " + std::to_string(held) + " app mounts already");
    }
    mounts_[m.id] = m;
    tickets_[m.ticket] = m.id;
    hook = hooked_.insert(m.session_id).second;
  }
  if (hook) {
    std::weak_ptr<AppUiHost*> weak = self_;
    const auto id = m.session_id;
    session->on_close([weak, id] {
      if (auto self = weak.lock()) (*self)->close_session(id);
    });
  }
  auto capabilities = bridge_.list(m.app, workspace);
  const std::string display = json::string_member(manifest.front_matter, "displayName");
  return json::value(json::object{
      {"mountId", m.id},
      {"url", std::string(kPrefix) + m.ticket + "/" + m.document},
      {"appId", m.app},
      {"displayName", display.empty() ? m.app : display},
      {"version", m.version},
      {"dev", app.value().dev()},
      {"entryKey", m.entry},
      {"title", json::string_member(*entry, "title")},
      {"route", m.route},
      // A sandboxed frame without allow-same-origin has an opaque origin: its messages say "null".
      {"runtimeOrigin", "null"},
      {"capabilities", capabilities.ok() ? json::value(std::move(capabilities).value())
                                         : json::value(json::array())}});
}

Result<AppUiHost::Mount> AppUiHost::mount_of(std::uint64_t session_id,
                                             std::string_view mount_id) const {
  std::lock_guard lock(mu_);
  auto it = mounts_.find(mount_id);
  if (it == mounts_.end() || it->second.session_id != session_id) {
    return Error::make(ErrorCode::kInvalidParams, "no such app mount on this connection",
                       json::object{{"field", "mountId"}});
  }
  return it->second;
}

void AppUiHost::close_session(std::uint64_t session_id) {
  std::lock_guard lock(mu_);
  for (auto it = mounts_.begin(); it != mounts_.end();) {
    if (it->second.session_id == session_id) {
      tickets_.erase(it->second.ticket);
      it = mounts_.erase(it);
    } else {
      ++it;
    }
  }
  hooked_.erase(session_id);
}

asio::awaitable<Result<json::value>> AppUiHost::list_entries() {
  std::function<Result<json::value>()> work = [this] { return entries(); };
  co_return co_await blocking_.run(work);
}

asio::awaitable<Result<json::value>> AppUiHost::open_mount(std::shared_ptr<rpc::Session> session,
                                                           std::string app_id,
                                                           std::string entry_key,
                                                           std::string workspace) {
  std::function<Result<json::value>()> work = [this, session, app_id, entry_key, workspace] {
    return open(session, app_id, entry_key, workspace);
  };
  co_return co_await blocking_.run(work);
}

Result<json::value> AppUiHost::close_mount(std::uint64_t session_id, std::string_view mount_id) {
  HEARTH_ASSIGN_OR_RETURN(auto m, mount_of(session_id, mount_id));
  {
    std::lock_guard lock(mu_);
    tickets_.erase(m.ticket);
    mounts_.erase(m.id);
  }
  return json::value(json::object{{"mountId", m.id}, {"closed", true}});
}

asio::awaitable<Result<json::value>> AppUiHost::invoke(std::uint64_t session_id,
                                                       std::string_view mount_id,
                                                       agentapp::Invocation call) {
  HEARTH_CO_ASSIGN_OR_RETURN(auto m, mount_of(session_id, mount_id));
  call.app = m.app;  // the mount's app, whatever the frame said
  call.caller = "ui:" + m.entry;
  std::function<Result<json::value>()> work = [this, call] { return bridge_.invoke(call); };
  std::string lane = call.app;
  co_return co_await blocking_.run_in(lane, work);
}

asio::awaitable<net::HttpResponse> AppUiHost::serve(net::HttpRequest request) {
  const std::string host = std::string(request.header("host").value_or(""));
  std::string_view rest = std::string_view(request.path).substr(kPrefix.size());
  const auto slash = rest.find('/');
  if (slash == std::string_view::npos) co_return not_found();
  const std::string ticket(rest.substr(0, slash));
  const auto decoded = rfc3986::percent_decode(rest.substr(slash + 1), false);
  Mount m;
  {
    std::lock_guard lock(mu_);
    auto t = tickets_.find(ticket);
    if (t == tickets_.end()) co_return not_found();
    m = mounts_.at(t->second);
  }
  std::string file = decoded ? *decoded : std::string();
  if (file.empty()) file = m.document;
  if (!is_clean_relative(file)) co_return not_found();
  const auto root = m.ui_root;
  const auto limit = options_.max_file_bytes;
  std::function<Result<std::string>()> work = [root, file, limit]() -> Result<std::string> {
    auto body = read_beneath(root, file, limit);
    if (!body) return Error::make(ErrorCode::kInvalidParams, "not found");
    return std::move(*body);
  };
  auto body = co_await blocking_.run(work);
  if (!body.ok()) co_return not_found();
  net::HttpResponse out;
  out.content_type = views::content_type_of(file);
  if (out.content_type.starts_with("text/html")) {
    // The app's own inline scripts run under the nonce of this response; nothing is added.
    const std::string nonce = random_hex(16);
    out.body = views::add_nonce(body.value(), nonce);
    out.headers = views::view_headers(views::Component{}, host, nonce);
  } else {
    out.body = std::move(body).value();
    out.headers = views::view_headers(views::Component{}, host, "");
  }
  co_return out;
}

}  // namespace hearth::appui
