// `hearth lafs check FILE... [--json] [--tier core|standard|complete]`: the LAFS conformance runner
// on files (envelopes, flag inputs, workflow documents), one report a file. Also the CLI's part of
// envelope mode: operation names for `_meta.operation`, and `hearth call --lafs` exit codes.

#include <CLI/CLI.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>

#include "cli/common.hpp"
#include "json/json.hpp"
#include "lafs/conformance.hpp"
#include "lafs/registry.hpp"
#include "lafs/rpc_envelope.hpp"
#include "rpc/dispatcher.hpp"

namespace hearth::cli {

namespace {

struct LafsCheckOptions {
  std::vector<std::string> files;
  bool json = false;
  std::string tier;
};

// One file: its report, or why it could not be checked.
struct FileResult {
  std::string file;
  std::optional<lafs::Report> report;
  std::string error;
};

FileResult check_file(const std::string& path, std::optional<lafs::Tier> tier) {
  FileResult r{path, std::nullopt, {}};
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    r.error = "is a folder, not a file (name the JSON files in it)";
    return r;
  }
  std::ifstream in(path);
  if (!in) {
    r.error = std::string("cannot read the file: ") + std::strerror(errno);
    return r;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  auto doc = json::parse_text(ss.str(), json::ParseLimits{.max_depth = 256});
  if (!doc.ok()) {
    r.error = doc.error().message;
    return r;
  }
  r.report = lafs::check_document(doc.value(), tier);
  return r;
}

int run_check(const LafsCheckOptions& opt) {
  const std::optional<lafs::Tier> tier =
      opt.tier.empty() ? std::nullopt : lafs::parse_tier(opt.tier);
  std::vector<FileResult> results;
  for (const auto& f : opt.files) results.push_back(check_file(f, tier));
  bool unreadable = false, failed = false;
  for (const auto& r : results) {
    if (!r.report) {
      unreadable = true;
    } else if (!r.report->ok) {
      failed = true;
    }
  }
  const std::string tier_name =
      tier ? std::string(lafs::to_string(*tier)) : std::string("all checks");
  if (opt.json) {
    json::array files;
    for (const auto& r : results) {
      json::object o;
      o["file"] = r.file;
      if (r.report) {
        for (auto& kv : lafs::to_json(*r.report)) o[kv.key()] = kv.value();
      } else {
        o["ok"] = false;
        o["error"] = r.error;
      }
      files.push_back(std::move(o));
    }
    json::object out;
    out["ok"] = !failed && !unreadable;
    out["tier"] = tier ? json::value(lafs::to_string(*tier)) : json::value(nullptr);
    out["files"] = std::move(files);
    std::cout << json::dump(out) << std::endl;
  } else {
    std::size_t passed = 0;
    for (const auto& r : results) {
      if (!r.report) {
        std::cout << r.file << ": ERROR " << r.error << "\n";
        continue;
      }
      std::cout << r.file << ": " << lafs::to_string(r.report->kind) << ", " << tier_name << ": "
                << (r.report->ok ? "PASS" : "FAIL") << "\n"
                << lafs::to_text(*r.report);
      if (r.report->ok) ++passed;
    }
    std::cout << passed << "/" << results.size() << " files pass (" << tier_name << ")\n";
  }
  if (unreadable) return 2;
  return failed ? 1 : 0;
}

}  // namespace

/// Registers `hearth lafs check` on `app`; `run` is set to what to do when it was chosen.
CLI::App* add_lafs_command(CLI::App& app, std::function<int()>& run) {
  auto opt = std::make_shared<LafsCheckOptions>();
  auto* lafs_cmd = app.add_subcommand("lafs", "LAFS response envelopes: the conformance runner");
  lafs_cmd->require_subcommand(1);
  auto* check_cmd = lafs_cmd->add_subcommand(
      "check", "Run the LAFS conformance checks on envelope, flag-input or workflow JSON files");
  check_cmd->add_option("files", opt->files, "JSON files")->required();
  check_cmd->add_flag("--json", opt->json, "Print the reports as JSON");
  check_cmd
      ->add_option("--tier", opt->tier,
                   "Only the checks of this tier decide (default: every check)")
      ->check(CLI::IsMember({"core", "standard", "complete"}));
  check_cmd->footer(
      "Exit status: 0 when every file passes (the requested tier), 1 when one fails, 2 when a "
      "file\n"
      "cannot be read or is not JSON.");
  run = [opt] { return run_check(*opt); };
  return lafs_cmd;
}

}  // namespace hearth::cli

namespace hearth::cli {

int lafs_exit_code(const json::value& envelope) {
  const json::value* success = json::member(envelope, "success");
  if (success != nullptr && success->is_bool() && success->get_bool()) return 0;
  const json::value* error = json::member(envelope, "error");
  const json::value* code = error != nullptr ? json::member(*error, "code") : nullptr;
  const lafs::RegisteredCode* entry =
      code != nullptr && code->is_string() ? lafs::find_code(code->get_string()) : nullptr;
  return entry != nullptr ? entry->cli_exit : 1;
}

int print_lafs_input_error(const std::string& service, const std::string& endpoint,
                           const Error& error) {
  lafs::RpcCall call;
  call.operation = service.empty() ? endpoint : service + "." + endpoint;
  call.id = 1;
  call.transport = "inproc";
  const json::value envelope = lafs::envelope_for_call(call, Result<json::value>(error));
  std::cout << json::dump(envelope) << std::endl;
  return lafs_exit_code(envelope);
}

}  // namespace hearth::cli
