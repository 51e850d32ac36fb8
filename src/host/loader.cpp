// Host: finding and loading services, and what the jail will make of their permissions.
#include <set>

#include "host/host.hpp"

namespace hearth::host {
namespace asio = boost::asio;

namespace {
handlers::KindOptions with_executor(handlers::KindOptions kinds, asio::any_io_executor executor) {
  if (!kinds.executor) kinds.executor = std::move(executor);
  return kinds;
}
}  // namespace

Host::Host(HostOptions options, asio::any_io_executor executor)
    : options_(options),
      executor_(std::move(executor)),
      registry_(handlers::make_builtin_registry(with_executor(options.kinds, executor_))),
      compiler_(schema::make_draft7_compiler()),
      blocking_(std::make_unique<BlockingExecutor>(std::max<std::size_t>(1, options.blocking_threads))) {}

Host::~Host() {
  shutdown();
  blocking_->join();
}

void Host::shutdown() {
  for (auto& s : services_) {
    if (s->hub) s->hub->close_all();
  }
  registry_->shutdown();
}

std::vector<std::string> Host::jail_notes(const manifest::Manifest& m) const {
  std::vector<std::string> notes;
  const auto& jail = options_.kinds.jail;
  if (!jail) return notes;
  if (jail->insecure()) {
    notes.push_back(m.name + ": --insecure-no-sandbox: handler processes run WITHOUT the jail; "
                             "fileAccess, networkAccess and maxMemory are not enforced");
    return notes;
  }
  const bool memory_cgroup = jail->capabilities().has("memory cgroup");
  for (const auto& ep : m.endpoints) {
    const std::string who = m.name + "." + ep.id;
    jail::Request request;
    request.network_access = ep.effective.network_access;
    for (const auto& name : jail::Jail::required_mechanisms(request)) {
      if (!jail->capabilities().has(name))
        notes.push_back(who + ": calls will be refused (-32001): the jail needs " + name +
                        ", which this machine does not offer (see `hearth doctor`)");
    }
    if (request.network_access &&
        request.network_access->mode() == egress::NetworkPolicy::Mode::kAny) {
      notes.push_back(who + ": networkAccess true gives the handler the host's network "
                              "(discouraged: list the hosts it needs instead)");
    }
    if (ep.effective.max_memory && !memory_cgroup)
      notes.push_back(who + ": maxMemory is enforced per process (RLIMIT_AS) only: no writable "
                            "memory cgroup on this machine");
  }
  return notes;
}

std::unique_ptr<Host::Service> Host::load_service(const std::filesystem::path& dir,
                                                  Problems& problems) {
  auto loaded = manifest::load(dir, *registry_, *compiler_, problems);
  if (!loaded) return nullptr;
  auto service = std::make_unique<Service>();
  service->manifest = std::move(*loaded);
  const auto& m = service->manifest;
  std::set<std::string, std::less<>> subscription_ids;
  for (std::size_t i = 0; i < m.endpoints.size(); ++i) {
    const auto& ep = m.endpoints[i];
    const handlers::Kind* kind = registry_->find(ep.handler_type);
    if (kind == nullptr) {  // check() already refused it; kept as a guard
      problems.push_back({index_path("endpoints", i) + ".handler.type", "unknown handler type"});
      continue;
    }
    auto handler = kind->create(m, ep);
    if (!handler.ok()) {
      problems.push_back({index_path("endpoints", i) + ".handler", handler.error().message});
      continue;
    }
    service->handlers[ep.id] = std::move(handler).value();
    if (ep.method == manifest::Method::kSubscription) subscription_ids.insert(ep.id);
  }
  if (!problems.empty()) return nullptr;
  service->hub = std::make_shared<SubscriptionHub>(m.name, options_.subscription_limits);
  service->hub->set_endpoints(std::move(subscription_ids));
  return service;
}

std::unique_ptr<Host> Host::load(const std::vector<std::filesystem::path>& paths,
                                 HostOptions options, asio::any_io_executor executor,
                                 LoadReport& report) {
  std::unique_ptr<Host> host(new Host(options, std::move(executor)));
  std::map<std::string, std::filesystem::path> names;
  for (const auto& path : paths) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      report.failures.push_back({path, {{"", "no such file or folder"}}});
      continue;
    }
    auto dirs = manifest::discover(path);
    if (dirs.empty()) {
      report.failures.push_back({path, {{"", "no lavs.json here or in its immediate subfolders"}}});
      continue;
    }
    for (const auto& dir : dirs) {
      Problems problems;
      const std::filesystem::path file = dir / "lavs.json";
      auto service = host->load_service(dir, problems);
      if (!service) {
        report.failures.push_back({file, std::move(problems)});
        continue;
      }
      const auto& name = service->manifest.name;
      if (auto it = names.find(name); it != names.end()) {
        report.failures.push_back(
            {file, {{"name", "service name '" + name + "' is already served from " +
                                 it->second.string()}}});
        continue;
      }
      names[name] = dir;
      // Say plainly, at start, what the jail will do with each endpoint's permissions.
      for (const auto& line : host->jail_notes(service->manifest)) report.warnings.push_back(line);
      host->services_.push_back(std::move(service));
    }
  }
  if (report.failures.empty() && host->services_.empty()) {
    report.failures.push_back({"", {{"", "no service to serve"}}});
  }
  if (!report.failures.empty()) return nullptr;
  return host;
}

}  // namespace hearth::host
