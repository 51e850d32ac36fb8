#include "workspace/manager.hpp"

#include "egress/network_policy.hpp"

namespace hearth::workspace {
namespace asio = boost::asio;

Result<std::unique_ptr<Manager>> Manager::create(const asio::any_io_executor& executor,
                                                 ManagerOptions options, BlockingExecutor& blocking,
                                                 Services* services) {
  HEARTH_ASSIGN_OR_RETURN(auto store, Store::open(options.database));
  return std::unique_ptr<Manager>(
      new Manager(executor, std::move(options), std::move(store), blocking, services));
}

Manager::Manager(const asio::any_io_executor& executor, ManagerOptions options,
                 std::unique_ptr<Store> store, BlockingExecutor& blocking, Services* services)
    : executor_(executor),
      options_(std::move(options)),
      store_(std::move(store)),
      blocking_(blocking),
      services_(services) {}

Manager::~Manager() {
  shutdown();
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
