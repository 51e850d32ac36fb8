// Host: finding and loading services, and what the jail will make of their permissions.
#include <set>
#include <utility>

#include "handlers/builtin/builtin.hpp"
#include "host/host.hpp"

namespace hearth::host {
namespace asio = boost::asio;

namespace {
handlers::KindOptions with_executor(handlers::KindOptions kinds, asio::any_io_executor executor) {
  if (!kinds.executor) kinds.executor = std::move(executor);
  return kinds;
}
}  // namespace

Host::Host(const HostOptions& options, asio::any_io_executor executor)
    : options_(options),
      executor_(std::move(executor)),
      registry_(handlers::make_builtin_registry(with_executor(options.kinds, executor_))),
      compiler_(schema::make_draft7_compiler()),
      services_(std::make_shared<const ServiceList>()),
      blocking_(
          std::make_unique<BlockingExecutor>(std::max<std::size_t>(1, options.blocking_threads))) {}

Host::~Host() {
  shutdown();
  blocking_->join();
}

void Host::shutdown() {
  for (const auto& s : *services()) {
    if (s->hub) s->hub->close_all();
  }
  registry_->shutdown();
}

std::shared_ptr<const Host::ServiceList> Host::services() const {
  std::lock_guard lock(services_mu_);
  return services_;
}

std::vector<std::string> Host::jail_notes(const manifest::Manifest& m) const {
  std::vector<std::string> notes;
  const auto& jail = options_.kinds.jail;
  if (!jail) return notes;
  if (jail->insecure()) {
    notes.push_back(m.name +
                    ": --insecure-no-sandbox: handler processes run WITHOUT the jail; "
                    "fileAccess, networkAccess and maxMemory are not enforced");
    return notes;
  }
  const bool memory_cgroup = jail->capabilities().has("memory cgroup");
  for (const auto& ep : m.endpoints) {
    const std::string who = m.name + "." + ep.id;
    jail::Request request;
    request.network_access = ep.effective.network_access;
    for (const auto& name : jail::Jail::required_mechanisms(request)) {
      if (!jail->capabilities().has(name)) {
        std::string note = who;
        note += ": calls will be refused (-32001): the jail needs ";
        note += name;
        note += ", which this machine does not offer (see `hearth doctor`)";
        notes.push_back(std::move(note));
      }
    }
    if (request.network_access &&
        request.network_access->mode() == egress::NetworkPolicy::Mode::kAny) {
      notes.push_back(who +
                      ": networkAccess true gives the handler the host's network "
                      "(discouraged: list the hosts it needs instead)");
    }
    if (ep.effective.max_memory && !memory_cgroup) {
      notes.push_back(who +
                      ": maxMemory is enforced per process (RLIMIT_AS) only: no writable "
                      "memory cgroup on this machine");
    }
  }
  return notes;
}

std::unique_ptr<Host::Service> Host::load_service(const std::filesystem::path& dir,
                                                  std::string source, Problems& problems) {
  auto loaded = manifest::load_text(source, dir / "lavs.json", *registry_, *compiler_, problems);
  if (!loaded) return nullptr;
  if (options_.strict && !loaded->warnings.empty()) {
    for (auto& w : loaded->warnings) problems.push_back(std::move(w));
    return nullptr;
  }
  auto service = std::make_unique<Service>();
  service->dir = dir;
  service->source = std::move(source);
  service->manifest = std::move(*loaded);
  service->manifest_text = std::make_shared<const std::string>(json::dump(service->manifest.raw));
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
  if (options_.publish_relay) {
    service->hub->set_relay(
        [relay = options_.publish_relay, name = m.name](
            std::string_view endpoint, const json::value& data) { relay(name, endpoint, data); });
  }
  return service;
}

std::unique_ptr<Host> Host::load(const std::vector<std::filesystem::path>& paths,
                                 const HostOptions& options, asio::any_io_executor executor,
                                 LoadReport& report) {
  std::unique_ptr<Host> host(new Host(options, std::move(executor)));
  auto list = std::make_shared<ServiceList>();
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
      auto source = manifest::read_text(dir, problems);
      auto service = source ? host->load_service(dir, std::move(*source), problems) : nullptr;
      if (!service) {
        report.failures.push_back({file, std::move(problems)});
        continue;
      }
      const auto& name = service->manifest.name;
      if (auto it = names.find(name); it != names.end()) {
        report.failures.push_back({file,
                                   {{"name", "service name '" + name + "' is already served from " +
                                                 it->second.string()}}});
        continue;
      }
      names[name] = dir;
      for (const auto& w : service->manifest.warnings) {
        report.warnings.push_back(file.string() + ": " + w.to_string());
      }
      // Say plainly, at start, what the jail will do with each endpoint's permissions.
      for (const auto& line : host->jail_notes(service->manifest)) report.warnings.push_back(line);
      list->push_back(std::move(service));
    }
  }
  host->services_ = std::move(list);
  if (report.failures.empty() && host->services_->empty() && !options.allow_no_services) {
    report.failures.push_back({"", {{"", "no service to serve"}}});
  }
  if (!report.failures.empty()) return nullptr;
  return host;
}

namespace {
/// What the subscribers of `endpoint` of a service being replaced by `next` (null: removed) are
/// told: "reloaded" when the new definition still has it as a subscription, else "removed".
std::string end_reason(const manifest::Manifest* next, std::string_view endpoint) {
  if (next == nullptr) return "removed";
  const auto* ep = next->find(endpoint);
  return ep != nullptr && ep->method == manifest::Method::kSubscription ? "reloaded" : "removed";
}
}  // namespace

ReloadReport Host::reload(const std::vector<std::filesystem::path>& paths) {
  std::lock_guard reload_lock(reload_mu_);
  const auto current = services();
  std::map<std::filesystem::path, std::shared_ptr<const Service>> old_by_dir;
  for (const auto& s : *current) old_by_dir[s->dir] = s;

  ReloadReport report;
  // Each folder found now, with what it serves next: its old service or a new one.
  struct Entry {
    std::filesystem::path dir;
    std::shared_ptr<const Service> old;
    std::shared_ptr<const Service> next;
  };
  std::vector<Entry> entries;
  std::set<std::filesystem::path> seen;
  for (const auto& path : paths) {
    for (const auto& dir : manifest::discover(path)) {
      if (!seen.insert(dir).second) continue;
      Entry entry{dir, nullptr, nullptr};
      if (auto it = old_by_dir.find(dir); it != old_by_dir.end()) entry.old = it->second;
      entry.next = entry.old;
      Problems problems;
      auto source = manifest::read_text(dir, problems);
      if (!source) {
        // Unreadable for now (being rewritten, or just removed): keep what is served, if anything.
        if (entry.old) entries.push_back(std::move(entry));
        continue;
      }
      const bool unchanged = entry.old && entry.old->source == *source;
      auto failed = failed_sources_.find(dir);
      const bool known_bad = failed != failed_sources_.end() && failed->second == *source;
      if (unchanged || known_bad) {
        if (unchanged) failed_sources_.erase(dir);
        if (entry.old) entries.push_back(std::move(entry));
        continue;
      }
      // Handlers made from now on for this folder get helpers of their own: the old handlers
      // keep theirs until the last call on them is over.
      if (entry.old) registry_->release(dir);
      std::string text = *source;
      auto loaded = load_service(dir, std::move(text), problems);
      if (!loaded) {
        failed_sources_[dir] = std::move(*source);
        report.problems.failures.push_back({dir / "lavs.json", std::move(problems)});
        if (entry.old) entries.push_back(std::move(entry));
        continue;
      }
      failed_sources_.erase(dir);
      entry.next = std::move(loaded);
      entries.push_back(std::move(entry));
    }
  }

  std::erase_if(failed_sources_, [&](const auto& entry) { return seen.count(entry.first) == 0; });

  // Names stay unique. A name stays with the folder that served it until a reload has moved it:
  // a new definition may not take the name another folder serves (or served until now).
  std::map<std::string, std::filesystem::path, std::less<>> names;
  for (const auto& e : entries) {
    if (e.old) names.emplace(e.old->manifest.name, e.dir);
  }
  auto next_list = std::make_shared<ServiceList>();
  for (auto& e : entries) {
    if (e.next != e.old) {
      const auto& name = e.next->manifest.name;
      auto taken = names.find(name);
      if (taken != names.end() && taken->second != e.dir) {
        report.problems.failures.push_back(
            {e.dir / "lavs.json",
             {{"name",
               "service name '" + name + "' is already served from " + taken->second.string()}}});
        failed_sources_[e.dir] = e.next->source;
        e.next = e.old;
        if (!e.next) continue;
      } else {
        names.emplace(name, e.dir);
        for (const auto& w : e.next->manifest.warnings) {
          report.problems.warnings.push_back((e.dir / "lavs.json").string() + ": " + w.to_string());
        }
        for (const auto& line : jail_notes(e.next->manifest)) {
          report.problems.warnings.push_back(line);
        }
      }
    }
    next_list->push_back(e.next);
  }

  // What changed, by name.
  std::map<std::string, const Service*, std::less<>> next_by_name;
  for (const auto& s : *next_list) next_by_name[s->manifest.name] = s.get();
  std::set<const Service*> kept;
  for (const auto& e : entries) {
    if (e.next && e.next == e.old) kept.insert(e.old.get());
  }
  std::vector<std::pair<std::shared_ptr<const Service>, const manifest::Manifest*>> ended;
  for (const auto& s : *current) {
    if (kept.count(s.get()) != 0) continue;
    auto it = next_by_name.find(s->manifest.name);
    if (it == next_by_name.end()) {
      report.removed.push_back(s->manifest.name);
      ended.emplace_back(s, nullptr);
      // A folder served again later starts with helpers of its own.
      if (seen.count(s->dir) == 0) registry_->release(s->dir);
    } else {
      report.changed.push_back(s->manifest.name);
      ended.emplace_back(s, &it->second->manifest);
    }
  }
  std::set<std::string, std::less<>> before;
  for (const auto& s : *current) before.insert(s->manifest.name);
  for (const auto& s : *next_list) {
    if (kept.count(s.get()) == 0 && before.count(s->manifest.name) == 0) {
      report.added.push_back(s->manifest.name);
    }
  }
  if (!report.any_change()) return report;

  {
    std::lock_guard lock(services_mu_);
    services_ = std::move(next_list);
  }
  // New calls now reach the new definitions; the subscribers of the old ones are told.
  for (const auto& [old, next] : ended) {
    old->hub->end_all(
        [next = next](std::string_view endpoint) { return end_reason(next, endpoint); });
  }
  return report;
}

}  // namespace hearth::host
