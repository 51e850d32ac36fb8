#include "a2s/exec/catalog.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>

#include "a2s/search/wordnet.hpp"
#include "common/ascii.hpp"

namespace hearth::a2s {
namespace fs = std::filesystem;

std::shared_ptr<const Definition> Snapshot::find(std::string_view service) const {
  for (const auto& d : definitions) {
    if (d->service_name == service) return d;
  }
  for (const auto& d : definitions) {
    if (ascii::iequals(d->service_name, service)) return d;
  }
  return nullptr;
}

Catalog::Catalog(std::vector<fs::path> dirs)
    : dirs_(std::move(dirs)), snapshot_(std::make_shared<Snapshot>()) {
  static const bool kSaid = [] {
    if (WordNet::system() == nullptr) {
      spdlog::warn(
          "a2s: WordNet's database is not in $HEARTH_WORDNET or /usr/share/wordnet (Debian "
          "package wordnet-base): search runs without related words");
    }
    return true;
  }();
  (void)kSaid;
}

std::string Catalog::fingerprint() const {
  std::string out;
  for (const auto& dir : dirs_) {
    out += dir.string();
    out += '\n';
    std::error_code ec;
    std::vector<std::string> lines;
    for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      const auto ext = it->path().extension().string();
      if (ext != ".yaml" && ext != ".yml" && ext != ".json") continue;
      std::error_code sec;
      const auto size = it->file_size(sec);
      const auto mtime = it->last_write_time(sec).time_since_epoch().count();
      lines.push_back(it->path().string() + "\t" + std::to_string(size) + "\t" +
                      std::to_string(mtime));
    }
    if (ec) out += "unreadable: " + ec.message() + "\n";
    std::sort(lines.begin(), lines.end());
    for (const auto& line : lines) out += line + "\n";
  }
  return out;
}

void Catalog::load() {
  load_with(fingerprint());
}

bool Catalog::reload_if_changed() {
  auto now = fingerprint();
  {
    std::lock_guard lock(mutex_);
    if (now == fingerprint_) return false;
  }
  load_with(std::move(now));
  return true;
}

void Catalog::load_with(std::string fingerprint) {
  auto next = std::make_shared<Snapshot>();
  std::map<std::string, fs::path> names;  // serviceName -> the file that has it
  for (const auto& dir : dirs_) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
      next->failures.push_back({dir, {{"", "not a folder of service definitions"}}});
      continue;
    }
    auto loaded = load_directory(dir);
    for (auto& failure : loaded.failures) next->failures.push_back(std::move(failure));
    for (auto& definition : loaded.definitions) {
      auto [it, fresh] = names.emplace(definition->service_name, definition->source);
      if (!fresh) {
        next->failures.push_back(
            {definition->source,
             {{"serviceName", "'" + definition->service_name + "' is already defined by " +
                                  it->second.string()}}});
        continue;
      }
      for (const auto& w : definition->warnings) {
        spdlog::warn("a2s: {}: {}", definition->source, w.to_string());
      }
      next->definitions.push_back(std::move(definition));
    }
  }
  std::vector<StoredDefinition> stored;
  {
    std::lock_guard lock(mutex_);
    stored = stored_;
  }
  for (const auto& d : stored) {
    const fs::path source = stored_source(d.service);
    Problems problems;
    std::error_code ec;
    auto document = json::parse(d.document, ec);
    if (ec) {
      next->failures.push_back({source, {{"", "not JSON: " + ec.message()}}});
      continue;
    }
    auto definition = parse_definition(document, problems);
    if (!definition) {
      next->failures.push_back({source, std::move(problems)});
      continue;
    }
    definition->source = source.string();
    auto [it, fresh] = names.emplace(definition->service_name, source);
    if (!fresh) {
      next->failures.push_back(
          {source,
           {{"serviceName",
             "'" + definition->service_name + "' is already defined by " + it->second.string()}}});
      continue;
    }
    next->definitions.push_back(std::make_shared<const Definition>(std::move(*definition)));
  }
  std::sort(next->definitions.begin(), next->definitions.end(),
            [](const auto& a, const auto& b) { return a->service_name < b->service_name; });
  next->index = std::make_shared<const SearchIndex>(next->definitions);
  std::lock_guard lock(mutex_);
  next->generation = snapshot_->generation + 1;
  snapshot_ = std::move(next);
  fingerprint_ = std::move(fingerprint);
}

void Catalog::set_stored(std::vector<StoredDefinition> stored) {
  std::string now = fingerprint();
  {
    std::lock_guard lock(mutex_);
    stored_ = std::move(stored);
  }
  load_with(std::move(now));
}

std::shared_ptr<const Snapshot> Catalog::snapshot() const {
  std::lock_guard lock(mutex_);
  return snapshot_;
}

}  // namespace hearth::a2s
