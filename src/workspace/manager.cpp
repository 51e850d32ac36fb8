#include "workspace/manager.hpp"

#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>

#include "egress/network_policy.hpp"

namespace hearth::workspace {
namespace asio = boost::asio;

Result<std::unique_ptr<Manager>> Manager::create(const asio::any_io_executor& executor,
                                                 ManagerOptions options, BlockingExecutor& blocking,
                                                 Services* services) {
  if (!options.engine) options.engine = storage::sqlite_engine();
  HEARTH_ASSIGN_OR_RETURN(auto store, Store::open(*options.engine, options.database));
  return std::unique_ptr<Manager>(
      new Manager(executor, std::move(options), std::move(store), blocking, services));
}

Manager::Manager(const asio::any_io_executor& executor, ManagerOptions options,
                 std::unique_ptr<Store> store, BlockingExecutor& blocking, Services* services)
    : executor_(executor),
      options_(std::move(options)),
      store_(std::move(store)),
      blocking_(blocking),
      services_(services) {
  if (!options_.engine->shared()) return;
  remote_ = std::make_shared<Remote>();
  remote_->manager = this;
  std::weak_ptr<Remote> weak = remote_;
  auto& bus = options_.engine->bus();
  notices_ = bus.subscribe("workspace", [weak](const storage::Notice& notice) {
    std::error_code ec;
    const auto payload = json::parse(notice.payload, ec);
    const auto* o = ec ? nullptr : payload.if_object();
    const auto string_of = [o](std::string_view key) {
      const auto* v = o != nullptr ? o->if_contains(key) : nullptr;
      return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
    };
    const std::string name = string_of("workspace");
    if (name.empty()) return;
    const auto* v = o->if_contains("version");
    const std::int64_t version = v != nullptr && v->is_int64() ? v->get_int64() : 0;
    if (auto r = weak.lock()) {
      std::lock_guard lock(r->mu);
      if (r->manager != nullptr) {
        r->manager->refresh(name, version, string_of("actor"), string_of("kind"));
      }
    }
  });
  resyncs_ = bus.on_resync([weak] {
    if (auto r = weak.lock()) {
      std::lock_guard lock(r->mu);
      if (r->manager != nullptr) r->manager->refresh("", 0, "", "");
    }
  });
}

Manager::~Manager() {
  if (remote_) {
    options_.engine->bus().unsubscribe(notices_);
    options_.engine->bus().unsubscribe(resyncs_);
    std::lock_guard lock(remote_->mu);
    remote_->manager = nullptr;
  }
  shutdown();
}

void Manager::publish(const ChangeEvent& event) {
  if (!remote_ || event.remote) return;
  const std::string payload = json::serialize(json::object{{"workspace", event.workspace},
                                                           {"version", event.version},
                                                           {"actor", event.actor},
                                                           {"kind", event.kind}});
  // The bus writes to the database: off the thread that committed.
  std::shared_ptr<storage::Engine> engine = options_.engine;
  std::function<Status()> send = [engine, payload] {
    return engine->bus().publish("workspace", payload);
  };
  asio::co_spawn(
      executor_,
      [this, send]() -> asio::awaitable<void> {
        auto sent = co_await blocking_.run(send);
        if (!sent.ok()) {
          spdlog::warn("workspaces: telling the other daemons: {}", sent.error().message);
        }
      },
      asio::detached);
}

void Manager::refresh(const std::string& name, std::int64_t version, const std::string& actor,
                      const std::string& kind) {
  std::vector<std::shared_ptr<Workspace>> targets;
  {
    std::lock_guard lock(mu_);
    for (const auto& [n, ws] : workspaces_) {
      if ((name.empty() || n == name) && ws->wants_refresh(version)) targets.push_back(ws);
    }
  }
  for (auto& ws : targets) {
    asio::co_spawn(
        executor_,
        [ws, actor, kind]() -> asio::awaitable<void> {
          auto st = co_await ws->refresh(actor, kind);
          if (!st.ok()) {
            spdlog::warn("workspace {}: reading a change another daemon made: {}", ws->name(),
                         st.error().message);
          }
        },
        asio::detached);
  }
}

asio::awaitable<Result<std::shared_ptr<Workspace>>> Manager::open(std::filesystem::path dir) {
  Problems problems;
  std::error_code ec;
  const auto canonical = std::filesystem::canonical(dir, ec);
  if (ec) {
    co_return Error::make(ErrorCode::kInvalidParams,
                          "workspace folder " + dir.string() + ": " + ec.message());
  }
  {
    // Opening a folder that is open already gives the workspace it is.
    std::lock_guard lock(mu_);
    for (const auto& [name, ws] : workspaces_) {
      if (ws->definition().dir == canonical) co_return ws;
    }
  }
  auto def = load_definition(canonical, problems);
  if (!def) {
    std::string message = "workspace " + canonical.string() + " has problems:";
    json::array list;
    for (const auto& p : problems) {
      message += "\n  " + p.to_string();
      list.push_back(json::object{{"path", p.path}, {"message", p.message}});
    }
    co_return Error::make(ErrorCode::kInvalidParams, std::move(message),
                          json::object{{"problems", std::move(list)}});
  }
  {
    std::lock_guard lock(mu_);
    if (workspaces_.contains(def->name)) {
      co_return Error::make(ErrorCode::kInvalidParams, "two workspaces are named " + def->name);
    }
  }

  jsworker::PoolConfig config;
  config.service = "workspace:" + def->name;
  config.service_dir = canonical;
  config.permissions.max_memory = def->limits.memory_bytes;
  config.permissions.max_execution_time = def->limits.timeout;
  config.permissions.file_access = def->grants.files;
  if (const auto* all = std::get_if<bool>(&def->grants.network)) {
    config.permissions.network_access = egress::NetworkPolicy(*all);
  } else {
    auto parsed =
        egress::NetworkPolicy::parse(std::get<std::vector<std::string>>(def->grants.network));
    if (!parsed.ok()) co_return parsed.error();
    config.permissions.network_access = std::move(parsed).value();
  }
  for (const auto& file : def->utility_files) {
    config.code_files.push_back((canonical / file).string());
  }
  config.size = std::max<std::size_t>(1, options_.workers);
  config.worker_program = options_.worker_program.empty() ? jsworker::default_worker_program()
                                                          : options_.worker_program;
  config.jail = options_.jail;
  auto pool = std::make_shared<jsworker::Pool>(executor_, std::move(config));
  pool->start();

  Workspace::Options wo;
  wo.pool = pool;
  wo.store = store_.get();
  wo.blocking = &blocking_;
  wo.services = services_;
  auto ws = std::make_shared<Workspace>(executor_, std::move(*def), wo);
  auto opened = co_await ws->open();
  if (!opened.ok()) {
    ws->close();
    pool->stop();
    co_return opened.error();
  }
  if (remote_) ws->add_listener([this](const ChangeEvent& event) { publish(event); });
  std::lock_guard lock(mu_);
  workspaces_.emplace(ws->name(), ws);
  pools_.push_back(pool);
  co_return ws;
}

Result<std::shared_ptr<Workspace>> Manager::find(std::string_view id) const {
  std::lock_guard lock(mu_);
  if (auto it = workspaces_.find(id); it != workspaces_.end()) return it->second;
  json::array names;
  for (const auto& [name, ws] : workspaces_) names.push_back(json::string(name));
  return Error::make(ErrorCode::kMethodNotFound,
                     "no workspace '" + std::string(id) + "' is served here",
                     json::object{{"workspaceId", id}, {"workspaces", std::move(names)}});
}

std::vector<std::shared_ptr<Workspace>> Manager::list() const {
  std::lock_guard lock(mu_);
  std::vector<std::shared_ptr<Workspace>> out;
  for (const auto& [name, ws] : workspaces_) out.push_back(ws);
  return out;
}

void Manager::shutdown() {
  std::map<std::string, std::shared_ptr<Workspace>, std::less<>> workspaces;
  std::vector<std::shared_ptr<jsworker::Pool>> pools;
  {
    std::lock_guard lock(mu_);
    workspaces.swap(workspaces_);
    pools.swap(pools_);
  }
  for (auto& [name, ws] : workspaces) ws->close();
  for (auto& pool : pools) pool->stop();
}

}  // namespace hearth::workspace
