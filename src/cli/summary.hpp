#pragma once
/// What `hearth check` prints.

#include <string>

#include "host/host.hpp"
#include "json/json.hpp"

namespace hearth::cli {

/// A one-screen summary of a loaded service.
std::string summary_text(const manifest::Manifest& manifest);

/// `hearth check --json`: {"ok", "services": [...], "problems": [{file, path, message}],
/// "warnings"}.
json::value report_json(const host::Host* host, const host::LoadReport& report);

/// JSON indented by two spaces.
std::string pretty_json(const json::value& value);

}  // namespace hearth::cli
