#include "views/views.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <ctime>

#include "common/ascii.hpp"
#include "common/atomic_file.hpp"
#include "common/beneath.hpp"
#include "common/clock.hpp"
#include "common/installed.hpp"
#include "common/random.hpp"
#include "common/rfc3986.hpp"
#include "views/document.hpp"

#ifndef HEARTH_SOURCE_WEB_DIR
#define HEARTH_SOURCE_WEB_DIR ""
#endif

namespace hearth::views {
namespace asio = boost::asio;
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kViewsPrefix = "/views/";
constexpr std::string_view kPagePrefix = "/ui/";
constexpr std::size_t kTicketHexBytes = 16;  // 128 bits

net::HttpResponse plain(int status, std::string text, Headers headers = {}) {
  net::HttpResponse out;
  out.status = status;
  out.content_type = "text/plain; charset=utf-8";
  out.headers = std::move(headers);
  out.body = std::move(text);
  return out;
}

/// A regular file below `dir`, no link followed, at most `limit` bytes; an error when there is
/// none such (the caller answers 404).
Result<std::string> read_below(const fs::path& dir, const fs::path& rel, std::size_t limit) {
  auto text = read_beneath(dir, rel, limit);
  if (!text) return Error::make(ErrorCode::kInvalidParams, "not found");
  return std::move(*text);
}

}  // namespace

Error no_mount(std::string_view mount_id) {
  json::object data;
  data["field"] = "mountId";
  data["constraint"] = "exists";
  data["mountId"] = mount_id;
  return Error::make(
      ErrorCode::kInvalidParams,
      "Invalid params: no view mount '" + std::string(mount_id) + "' on this connection",
      std::move(data));
}

fs::path default_web_dir() {
  if (const char* env = std::getenv("HEARTH_WEB_DIR"); env != nullptr && *env != '\0') {
    return env;
  }
  return installed::web_dir(installed::self_exe(), HEARTH_SOURCE_WEB_DIR);
}

ViewHost::ViewHost(host::Host& host, Options options)
    : host_(host), options_(std::move(options)), self_(std::make_shared<ViewHost*>(this)) {}

ViewHost::~ViewHost() {
  self_.reset();
}

Status ViewHost::add_routes(net::Routes& routes) {
  net::Route views;
  views.path = std::string(kViewsPrefix);
  views.access = net::Access::kOpen;  // the ticket is the capability: a frame has no token
  views.opaque_origin = true;
  views.handler = [this](net::HttpRequest r) { return serve_view(std::move(r)); };
  if (auto st = routes.add(std::move(views)); !st.ok()) return st;

  net::Route page;
  page.path = std::string(kPagePrefix);
  page.access = net::Access::kOpen;  // static files holding no secret
  page.handler = [this](net::HttpRequest r) { return serve_page(std::move(r)); };
  if (auto st = routes.add(std::move(page)); !st.ok()) return st;

  // "/ui" and the daemon's root lead a person who typed the address to the page (which asks
  // for the token's link when it has none); every other unrouted path still asks for the token.
  for (const char* path : {"/ui", "/"}) {
    net::Route bare;
    bare.path = path;
    bare.access = net::Access::kOpen;
    bare.handler = [](net::HttpRequest) -> asio::awaitable<net::HttpResponse> {
      co_return plain(308, "see /ui/\n", {{"Location", "/ui/"}});
    };
    if (auto st = routes.add(std::move(bare)); !st.ok()) return st;
  }
  return Status{};
}

asio::awaitable<Result<json::value>> ViewHost::open(std::shared_ptr<Viewer> viewer,
                                                    std::string service_name) {
  HEARTH_CO_ASSIGN_OR_RETURN(auto service, host_.find_service(service_name));
  std::function<Result<Component>()> work = [service, this] {
    return resolve(service->dir, service->manifest.view, options_.cdn_origins);
  };
  HEARTH_CO_ASSIGN_OR_RETURN(Component component, co_await host_.blocking().run(std::move(work)));

  auto mount = std::make_shared<Mount>();
  mount->id = "m" + random_hex(8);
  mount->ticket = random_hex(kTicketHexBytes);
  mount->service = service->manifest.name;
  mount->viewer_id = viewer->id();
  mount->viewer = viewer;
  mount->component = std::move(component);
  const std::string secret = random_hex(16);

  bool hook = false;
  if (!admit(mount, hook)) {
    co_return Error::make(ErrorCode::kInvalidParams,
                          "Invalid params: this connection already holds " +
                              std::to_string(options_.max_mounts_per_session) +
                              " view mounts; close some first");
  }
  if (hook) {
    std::weak_ptr<ViewHost*> weak = self_;
    const std::uint64_t id = mount->viewer_id;
    viewer->on_close([weak, id] {
      if (auto self = weak.lock()) (*self)->close_viewer(id);
    });
  }

  json::object result;
  result["mountId"] = mount->id;
  result["url"] = std::string(kViewsPrefix) + mount->ticket + "/";
  result["secret"] = secret;
  result["service"] = mount->service;
  result["component"] = json::object{{"type", to_string(mount->component.type)}};
  const json::value& view = service->manifest.view;
  const auto* fallback = view.is_object() ? view.get_object().if_contains("fallback") : nullptr;
  result["fallback"] = fallback != nullptr ? *fallback : json::value();
  const auto* theme = view.is_object() ? view.get_object().if_contains("theme") : nullptr;
  result["theme"] = theme != nullptr ? *theme : json::value(json::object{});
  // The daemon keeps no copy of the secret: it is the page's check of the frame's hello, given
  // to the frame in the URL fragment (never sent back here).
  co_return json::value(std::move(result));
}

bool ViewHost::admit(const std::shared_ptr<Mount>& mount, bool& first_of_viewer) {
  std::lock_guard lock(mu_);
  std::size_t held = 0;
  for (const auto& [id, m] : mounts_) held += m->viewer_id == mount->viewer_id ? 1 : 0;
  if (held >= options_.max_mounts_per_session) return false;
  mounts_[mount->id] = mount;
  tickets_[mount->ticket] = mount->id;
  first_of_viewer = hooked_viewers_.insert(mount->viewer_id).second;
  return true;
}

Result<ViewHost::MountRef> ViewHost::find(std::uint64_t viewer_id,
                                          std::string_view mount_id) const {
  std::lock_guard lock(mu_);
  auto it = mounts_.find(mount_id);
  if (it == mounts_.end() || it->second->viewer_id != viewer_id) return no_mount(mount_id);
  return MountRef{it->second->id, it->second->service};
}

bool ViewHost::close(std::uint64_t viewer_id, std::string_view mount_id) {
  std::shared_ptr<Mount> mount;
  {
    std::lock_guard lock(mu_);
    auto it = mounts_.find(mount_id);
    if (it == mounts_.end() || it->second->viewer_id != viewer_id) return false;
    mount = it->second;
    tickets_.erase(mount->ticket);
    mounts_.erase(it);
  }
  for (const auto& sub : mount->subscriptions) host_.unsubscribe(viewer_id, sub);
  return true;
}

void ViewHost::close_viewer(std::uint64_t viewer_id) {
  {
    std::lock_guard lock(mu_);
    for (auto it = mounts_.begin(); it != mounts_.end();) {
      if (it->second->viewer_id == viewer_id) {
        tickets_.erase(it->second->ticket);
        it = mounts_.erase(it);
      } else {
        ++it;
      }
    }
    hooked_viewers_.erase(viewer_id);
  }
  // The connection's own close hook ends its subscriptions (the host's subscriber is told).
}

bool ViewHost::add_subscription(std::string_view mount_id, std::string subscription_id) {
  std::lock_guard lock(mu_);
  auto it = mounts_.find(mount_id);
  if (it == mounts_.end()) return false;
  it->second->subscriptions.insert(std::move(subscription_id));
  return true;
}

bool ViewHost::remove_subscription(std::string_view mount_id, const std::string& subscription_id) {
  std::lock_guard lock(mu_);
  auto it = mounts_.find(mount_id);
  return it != mounts_.end() && it->second->subscriptions.erase(subscription_id) > 0;
}

json::value ViewHost::mounts() const {
  json::array list;
  {
    std::lock_guard lock(mu_);
    for (const auto& [id, m] : mounts_) {
      json::object entry;
      entry["mountId"] = id;
      entry["service"] = m->service;
      entry["component"] = to_string(m->component.type);
      entry["subscriptions"] = m->subscriptions.size();
      list.push_back(std::move(entry));
    }
  }
  json::object live;
  for (const auto& service : *host_.services()) {
    live[service->manifest.name] = service->hub->subscriber_count();
  }
  return json::object{{"mounts", std::move(list)}, {"subscriptions", std::move(live)}};
}

std::shared_ptr<const ViewHost::Mount> ViewHost::by_ticket(std::string_view ticket) const {
  std::lock_guard lock(mu_);
  auto t = tickets_.find(ticket);
  if (t == tickets_.end()) return nullptr;
  auto m = mounts_.find(t->second);
  return m == mounts_.end() ? nullptr : m->second;
}

asio::awaitable<net::HttpResponse> ViewHost::serve_view(net::HttpRequest request) {
  const std::string host = std::string(request.header("host").value_or(""));
  std::string_view rest = std::string_view(request.path).substr(kViewsPrefix.size());
  const std::size_t slash = rest.find('/');
  const std::string_view ticket = rest.substr(0, slash);
  std::shared_ptr<const Mount> mount =
      ticket.size() == kTicketHexBytes * 2 && slash != std::string_view::npos ? by_ticket(ticket)
                                                                              : nullptr;
  if (!mount) co_return plain(404, "no such view\n", view_headers(Component{}, host, ""));
  const Component& component = mount->component;
  const auto decoded = rfc3986::percent_decode(rest.substr(slash + 1), false);
  const auto not_found = [&] {
    return plain(404, "not found\n", view_headers(component, host, ""));
  };
  if (!decoded) co_return not_found();
  const std::string& rel = *decoded;

  net::HttpResponse out;
  const bool document =
      rel.empty() || rel == "index.html" || (component.html && rel == component.entry);
  if (document) {
    std::string html;
    if (component.html) {
      std::function<Result<std::string>()> work = [&component, this] {
        return read_below(component.base, component.entry, options_.max_file_bytes);
      };
      auto text = co_await host_.blocking().run(std::move(work));
      if (!text.ok()) co_return not_found();
      html = std::move(text).value();
    }
    json::object config;
    config["v"] = 1;
    config["mountId"] = mount->id;
    config["service"] = mount->service;
    config["hostOrigin"] = "http://" + host;
    json::object c;
    c["type"] = to_string(component.type);
    if (component.html) c["html"] = true;
    if (!component.module.empty()) c["module"] = component.module;
    if (!component.export_name.empty()) c["exportName"] = component.export_name;
    config["component"] = std::move(c);
    const std::string nonce = component.html ? random_hex(16) : "";
    const std::string bootstrap =
        std::string(kViewsPrefix) + mount->ticket + "/.hearth/bootstrap.js";
    out.body = view_document(component, config, bootstrap, html, nonce);
    out.content_type = "text/html; charset=utf-8";
    out.headers = view_headers(component, host, nonce);
    co_return out;
  }

  fs::path dir;
  std::string file;
  if (rel == ".hearth/bootstrap.js") {
    dir = options_.web_dir;
    file = "view-bootstrap.js";
  } else if (rel == ".hearth/inline.js") {
    if (component.type != Component::Type::kInline) co_return not_found();
    out.body = component.code;
    out.content_type = "text/javascript; charset=utf-8";
    out.headers = view_headers(component, host, "");
    co_return out;
  } else if (component.type == Component::Type::kNpm) {
    file = npm_rest(component, rel);
    dir = component.base;
  } else if (component.type == Component::Type::kLocal) {
    if (!component.entry_only || rel == component.entry) {
      file = rel;
      dir = component.base;
    }
  }
  if (file.empty() || !is_clean_relative(file)) co_return not_found();
  std::function<Result<std::string>()> work = [dir, file, this] {
    return read_below(dir, file, options_.max_file_bytes);
  };
  auto body = co_await host_.blocking().run(std::move(work));
  if (!body.ok()) co_return not_found();
  out.body = std::move(body).value();
  out.content_type = content_type_of(file);
  out.headers = view_headers(component, host, "");
  co_return out;
}

asio::awaitable<net::HttpResponse> ViewHost::serve_page(net::HttpRequest request) {
  const std::string host = std::string(request.header("host").value_or(""));
  const auto decoded =
      rfc3986::percent_decode(std::string_view(request.path).substr(kPagePrefix.size()), false);
  std::string file = decoded ? *decoded : std::string("\0", 1);
  if (file.empty()) file = "index.html";
  if (!is_clean_relative(file)) co_return plain(404, "not found\n", page_headers(host));
  std::function<Result<std::string>()> work = [file, this] {
    return read_below(options_.web_dir, file, options_.max_file_bytes);
  };
  auto body = co_await host_.blocking().run(std::move(work));
  if (!body.ok()) co_return plain(404, "not found\n", page_headers(host));
  net::HttpResponse out;
  out.body = std::move(body).value();
  out.content_type = content_type_of(file);
  out.headers = page_headers(host);
  co_return out;
}

fs::path ViewHost::state_file(std::string_view service) const {
  std::string name;
  bool plain_name = !service.empty() && service.front() != '.';
  for (char c : service) {
    if (!ascii::is_alnum(c) && c != '-' && c != '_' && c != '.') plain_name = false;
  }
  if (plain_name) {
    name = service;
  } else {
    static constexpr char kHex[] = "0123456789abcdef";
    name = "x-";
    for (unsigned char c : service) {
      name += kHex[c >> 4];
      name += kHex[c & 15];
    }
  }
  return options_.state_dir / "views" / (name + ".json");
}

asio::awaitable<Result<json::value>> ViewHost::get_state(std::string service) {
  if (options_.state_dir.empty()) co_return json::value(json::object{{"state", nullptr}});
  const fs::path file = state_file(service);
  std::function<Result<json::value>()> work = [file, this]() -> Result<json::value> {
    auto text = read_below(file.parent_path(), file.filename(), options_.max_state_bytes + 64);
    if (!text.ok()) return json::value(json::object{{"state", nullptr}});
    auto parsed = json::parse_text(text.value());
    if (!parsed.ok()) return json::value(json::object{{"state", nullptr}});
    return json::value(json::object{{"state", std::move(parsed).value()}});
  };
  co_return co_await host_.blocking().run(std::move(work));
}

asio::awaitable<Result<json::value>> ViewHost::set_state(std::string service, json::value state) {
  if (options_.state_dir.empty()) {
    co_return Error::make(ErrorCode::kInternalError,
                          "Internal error: this daemon keeps no state (no state dir)");
  }
  std::string text = json::dump(state);
  if (text.size() > options_.max_state_bytes) {
    json::object data;
    data["field"] = "state";
    data["constraint"] = "maxBytes";
    data["maxBytes"] = options_.max_state_bytes;
    data["bytes"] = text.size();
    co_return Error::make(ErrorCode::kInvalidParams,
                          "Invalid params: a view's state is at most " +
                              std::to_string(options_.max_state_bytes) +
                              " bytes of JSON (this is " + std::to_string(text.size()) + ")",
                          std::move(data));
  }
  const fs::path file = state_file(service);
  std::function<Result<json::value>()> work = [file, t = std::move(text)]() -> Result<json::value> {
    std::error_code ec;
    fs::create_directories(file.parent_path(), ec);
    fs::permissions(file.parent_path(), fs::perms::owner_all, fs::perm_options::replace, ec);
    AtomicWriteOptions options;
    options.mode = 0600;
    if (auto st = write_file_atomic(file, t, options); !st.ok()) return st.error();
    return json::value(json::object{{"saved", true}});
  };
  co_return co_await host_.blocking().run(std::move(work));
}

bool ViewHost::watched(std::string_view service) const {
  std::lock_guard lock(mu_);
  return std::any_of(mounts_.begin(), mounts_.end(),
                     [service](const auto& m) { return m.second->service == service; });
}

void ViewHost::publish(const host::Mutation& mutation) {
  std::vector<std::shared_ptr<Viewer>> viewers;
  std::uint64_t seq = 0;
  {
    std::lock_guard lock(mu_);
    std::set<std::uint64_t> seen;
    for (const auto& [id, m] : mounts_) {
      if (m->service != mutation.service || !seen.insert(m->viewer_id).second) continue;
      viewers.push_back(m->viewer);
    }
    seq = ++action_seq_[mutation.service];
  }
  if (viewers.empty()) return;
  json::object actor;
  if (!mutation.caller.mount.empty()) {
    actor["type"] = "view";
    actor["mountId"] = mutation.caller.mount;
  } else {
    actor["type"] = mutation.caller.transport.empty() ? "inproc" : mutation.caller.transport;
    if (!mutation.caller.client.empty()) actor["client"] = mutation.caller.client;
  }
  json::object params;
  params["service"] = mutation.service;
  params["endpoint"] = mutation.endpoint;
  if (mutation.withheld) {
    // The caller (a workspace side effect) passed values the model may not read.
    params["withheld"] = true;
  } else {
    params["input"] = mutation.input;
    if (json::dump(mutation.result).size() <= options_.max_action_result_bytes) {
      params["result"] = mutation.result;
    } else {
      params["resultOmitted"] = true;
    }
  }
  params["actor"] = std::move(actor);
  params["seq"] = seq;
  params["at"] = utc_timestamp(std::chrono::system_clock::now());
  for (const auto& viewer : viewers) viewer->agent_action(params);
}

}  // namespace hearth::views
