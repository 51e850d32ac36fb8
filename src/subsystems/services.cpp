#include "subsystems/services.hpp"

#include <spdlog/spdlog.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <iostream>

#include "json/json.hpp"
#include "methods/lavs/lavs.hpp"
#include "rpc/dispatcher.hpp"
#include "subsystems/audit.hpp"
#include "subsystems/registry.hpp"
#include "subsystems/sandbox.hpp"
#include "subsystems/storage.hpp"

namespace hearth::subsystems {
namespace asio = boost::asio;
namespace fs = std::filesystem;

namespace {

/// The lavs/servicesChanged notification of a reload.
std::string services_changed(const host::ReloadReport& report) {
  auto names = [](const std::vector<std::string>& list) {
    json::array out;
    for (const auto& name : list) out.push_back(json::value(name));
    return out;
  };
  json::object params;
  params["added"] = names(report.added);
  params["changed"] = names(report.changed);
  params["removed"] = names(report.removed);
  return json::dump(rpc::make_notification("lavs/servicesChanged", std::move(params)));
}

void log_reload(const host::ReloadReport& report) {
  for (const auto& failure : report.problems.failures) {
    for (const auto& problem : failure.problems) {
      spdlog::error("{}: {} (not reloaded: what was served stays served)", failure.file.string(),
                    problem.to_string());
    }
  }
  for (const auto& warning : report.problems.warnings) spdlog::warn("{}", warning);
  auto join = [](const std::vector<std::string>& list) {
    std::string out;
    for (const auto& name : list) out += (out.empty() ? "" : ", ") + name;
    return out.empty() ? std::string("-") : out;
  };
  if (report.any_change()) {
    spdlog::info("services reloaded: added {}; changed {}; removed {}", join(report.added),
                 join(report.changed), join(report.removed));
  }
}

}  // namespace

void print_load_report(const host::LoadReport& report) {
  for (const auto& failure : report.failures) {
    for (const auto& problem : failure.problems) {
      std::cerr << (failure.file.empty() ? std::string("hearth") : failure.file.string()) << ": "
                << problem.to_string() << "\n";
    }
  }
  for (const auto& warning : report.warnings) spdlog::warn("{}", warning);
}

asio::awaitable<void> watch_services(host::Host& host, std::vector<fs::path> paths,
                                     std::chrono::milliseconds interval, asio::steady_timer& timer,
                                     std::function<void(const host::ReloadReport&)> on_change) {
  for (;;) {
    timer.expires_after(interval);
    auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    if (ec) co_return;
    std::function<host::ReloadReport()> work = [&host, &paths] { return host.reload(paths); };
    auto report = co_await host.blocking().run(std::move(work));
    log_reload(report);
    if (report.any_change()) on_change(report);
  }
}

std::vector<std::string> changed_services(const host::ReloadReport& report) {
  std::vector<std::string> what = report.added;
  what.insert(what.end(), report.changed.begin(), report.changed.end());
  what.insert(what.end(), report.removed.begin(), report.removed.end());
  return what;
}

Services::Services(daemon::Context& context) : context_(context), watch_timer_(context.io()) {
  const auto& options = context.options();
  host::HostOptions host_options;
  host_options.kinds.a2s = context.find<Registry>().gateway();
  host_options.allow_no_services =
      options.paths.empty() && (!options.registry_dirs.empty() || !options.workspace_dirs.empty());
  host_options.default_timeout = std::chrono::milliseconds(options.default_timeout_ms);
  host_options.strict = options.strict;
  host_options.kinds.jail = context.find<Sandbox>().jail();
  host_options.kinds.js_workers = static_cast<std::size_t>(options.js_workers);
  engine_ = context.find<Storage>().engine();
  if (engine_->shared()) {
    // What a mutation publishes reaches the subscribers of every daemon of the database.
    auto db = engine_->open("lavs", context.state_dir() / "lavs.db");
    if (!db.ok()) throw daemon::StartupError("services: " + db.error().message);
    relay_db_ = std::move(db).value();
    static const std::vector<storage::Migration> kRelayMigrations = {
        {1,
         "CREATE TABLE lavs_published (id INTEGER PRIMARY KEY, service TEXT NOT NULL, endpoint "
         "TEXT NOT NULL, data TEXT NOT NULL, at INTEGER NOT NULL)"},
    };
    if (auto st = relay_db_->migrate("lavs", kRelayMigrations); !st.ok()) {
      throw daemon::StartupError("services: " + st.error().message);
    }
    relay_thread_ = std::make_unique<BlockingExecutor>(1);
    host_options.publish_relay = [this](const std::string& service, std::string_view endpoint,
                                        const json::value& data) {
      relay_out(service, endpoint, data);
    };
  }
  host::LoadReport report;
  host_ = host::Host::load(options.paths, host_options, context.io().get_executor(), report);
  print_load_report(report);
  if (!host_) throw daemon::StartupError("the services cannot be served (see above)");
  host_->set_audit(&context.find<Audit>().log());
  if (relay_thread_) {
    relay_notices_ = engine_->bus().subscribe(
        "lavs.publish", [this](const storage::Notice& notice) { relay_in(notice); });
  }
}

Services::~Services() = default;

void Services::on_reload(std::function<void(const host::ReloadReport&)> listener) {
  reload_listeners_.push_back(std::move(listener));
}

Status Services::expose(daemon::Surface& surface) {
  methods::lavs::add_methods(surface.rpc(), *host_);
  methods::lavs::name_lafs_operations(surface.rpc(), *host_);
  return {};
}

void Services::start() {
  ready_by_ = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  const auto& options = context_.options();
  if (!options.watch) return;
  asio::co_spawn(context_.io(),
                 watch_services(*host_, options.paths,
                                std::chrono::milliseconds(options.watch_interval_ms), watch_timer_,
                                [this](const host::ReloadReport& reload) {
                                  context_.broadcast(services_changed(reload));
                                  for (const auto& listener : reload_listeners_) listener(reload);
                                }),
                 asio::detached);
}

bool Services::ready() {
  if (host_->ready()) return true;
  if (std::chrono::steady_clock::now() < ready_by_) return false;
  if (!warned_) spdlog::warn("JavaScript workers are still starting after 20 s");
  warned_ = true;
  return true;
}

void Services::describe(boost::json::object& ready) const {
  json::array names;
  for (const auto& s : *host_->services()) names.push_back(json::value(s->manifest.name));
  ready["services"] = std::move(names);
}

void Services::relay_out(const std::string& service, std::string_view endpoint,
                         const json::value& data) {
  relay_thread_->post([this, service, endpoint = std::string(endpoint),
                       text = json::serialize(data)] {
    json::object payload{{"service", service}, {"endpoint", endpoint}};
    // A notice carries a few kilobytes at most: a larger item goes through a table, and the
    // notice names its row (kept a minute, for daemons that read it late).
    constexpr std::size_t kInline = 6000;
    if (text.size() + service.size() + endpoint.size() < kInline) {
      payload["data"] = json::parse(text);
    } else {
      const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
      auto id = std::chrono::steady_clock::now().time_since_epoch().count();
      auto st = relay_db_->execute(
          "INSERT INTO lavs_published (id, service, endpoint, data, at) VALUES (?, ?, ?, ?, ?)",
          {static_cast<std::int64_t>(id), service, endpoint, text, static_cast<std::int64_t>(now)});
      (void)relay_db_->execute("DELETE FROM lavs_published WHERE at < ?",
                               {static_cast<std::int64_t>(now - 60)});
      if (!st.ok()) {
        spdlog::warn("{}: an item published to {} did not reach the other daemons: {}", service,
                     endpoint, st.error().message);
        return;
      }
      payload["ref"] = static_cast<std::int64_t>(id);
    }
    if (auto told = engine_->bus().publish("lavs.publish", json::serialize(payload)); !told.ok()) {
      spdlog::warn("{}: an item published to {} did not reach the other daemons: {}", service,
                   endpoint, told.error().message);
    }
  });
}

void Services::relay_in(const storage::Notice& notice) {
  relay_thread_->post([this, text = notice.payload] {
    std::error_code ec;
    auto payload = json::parse(text, ec);
    const auto* o = ec ? nullptr : payload.if_object();
    if (o == nullptr) return;
    const auto service = json::string_member(payload, "service");
    const auto endpoint = json::string_member(payload, "endpoint");
    if (service.empty() || endpoint.empty()) return;
    json::value data;
    if (const auto* d = o->if_contains("data")) {
      data = *d;
    } else if (const auto* ref = o->if_contains("ref"); ref != nullptr && ref->is_int64()) {
      auto rows =
          relay_db_->query("SELECT data FROM lavs_published WHERE id = ?", {ref->get_int64()});
      const auto* stored =
          rows.ok() && !rows->empty() ? std::get_if<std::string>(&rows->front()[0]) : nullptr;
      if (stored == nullptr) {
        spdlog::warn("{}: an item another daemon published to {} is gone", service, endpoint);
        return;
      }
      data = json::parse(*stored, ec);
      if (ec) return;
    } else {
      return;
    }
    auto found = host_->find_service(service);
    if (!found.ok() || found.value()->hub == nullptr) return;
    found.value()->hub->publish_here(endpoint, std::move(data));
  });
}

void Services::stop() {
  watch_timer_.cancel();
  if (relay_thread_) {
    engine_->bus().unsubscribe(relay_notices_);
    relay_thread_->join();
  }
  host_->shutdown();
}

}  // namespace hearth::subsystems
