#include <iostream>

#include "cli/common.hpp"
#include "jail/jail.hpp"
#include "json/json.hpp"
#include "proc/process.hpp"

namespace hearth::cli {

namespace {

/// What a mechanism means for manifests, in one line.
std::string_view consequence(std::string_view mechanism) {
  if (mechanism == "landlock") {
    return "needed by every confined endpoint: file access limited to fileAccess and the system";
  }
  if (mechanism == "landlock-network") {
    return "optional: TCP bind/connect rules on top of the network namespace";
  }
  if (mechanism == "seccomp") {
    return "needed by every confined endpoint: ptrace, mount, bpf, keyctl... refused";
  }
  if (mechanism == "network namespace") {
    return "needed unless networkAccess is true: no network, or only the allowlisting proxy";
  }
  if (mechanism == "memory cgroup") {
    return "optional: maxMemory covers the whole process tree (else RLIMIT_AS per process)";
  }
  if (mechanism == "pids cgroup") {
    return "optional: fork bombs capped by the cgroup (RLIMIT_NPROC applies in any case)";
  }
  return "needed by every confined endpoint";
}

}  // namespace

int doctor(bool as_json) {
  jail::JailOptions options;
  options.launcher = proc::launcher();
  auto jail = jail::Jail::create(options);
  if (!jail.ok()) {
    if (as_json) {
      std::cout << json::dump(to_json(jail.error())) << std::endl;
    } else {
      std::cout << "hearth doctor: " << jail.error().message << "\n";
    }
    return 1;
  }
  const auto& caps = jail.value().capabilities();
  jail::Request all_on;  // networkAccess absent: the strictest needs
  const auto required = jail::Jail::required_mechanisms(all_on);
  bool confined_ok = true;
  for (const auto& name : required) confined_ok = confined_ok && caps.has(name);

  if (as_json) {
    json::array list;
    for (const auto& m : caps.mechanisms) {
      json::object o;
      o["mechanism"] = m.name;
      o["ok"] = m.ok;
      o["detail"] = m.detail;
      o["meaning"] = consequence(m.name);
      list.push_back(std::move(o));
    }
    json::object out;
    out["launcher"] = options.launcher.string();
    out["mechanisms"] = std::move(list);
    out["confinedEndpointsRun"] = confined_ok;
    std::cout << json::dump(out) << std::endl;
    return confined_ok ? 0 : 1;
  }
  std::cout << "hearth jail on this machine (launcher " << options.launcher.string() << ")\n\n";
  for (const auto& m : caps.mechanisms) {
    std::cout << (m.ok ? "  [ok]      " : "  [missing] ") << m.name;
    if (!m.detail.empty()) std::cout << " (" << m.detail << ")";
    std::cout << "\n            " << consequence(m.name) << "\n";
  }
  std::cout << "\n";
  if (confined_ok) {
    std::cout << "Every endpoint runs confined: fileAccess, networkAccess (false, lists, true), "
                 "maxExecutionTime and maxMemory are enforced by the operating system.\n";
  } else {
    std::cout << "Endpoints will be REFUSED (-32001) because these mechanisms are missing:";
    for (const auto& name : required) {
      if (!caps.has(name)) std::cout << " " << name;
    }
    std::cout << ".\n`hearth serve --insecure-no-sandbox` runs them without the jail (not "
                 "recommended).\n";
  }
  return confined_ok ? 0 : 1;
}

}  // namespace hearth::cli
