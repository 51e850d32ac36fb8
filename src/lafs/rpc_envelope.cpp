#include "lafs/rpc_envelope.hpp"

#include <array>

#include "common/random.hpp"
#include "lafs/disclosure.hpp"
#include "lafs/envelope.hpp"
#include "lafs/formats.hpp"
#include "lafs/rpc_map.hpp"

namespace hearth::lafs {

namespace {

constexpr std::array<std::string_view, 5> kLafsMembers = {"_lafs", "_fields", "_expand", "_mvi",
                                                          "_budget"};

Builder builder_for(const RpcCall& call) {
  std::string operation = call.operation.empty() ? std::string("hearth.rpc") : call.operation;
  if (code_point_count(operation) > 128) operation = truncate_code_points(operation, 128);
  Builder b(std::move(operation));
  b.request_id(request_id_for(call.id));
  b.transport(parse_transport(lafs_transport(call.transport)).value_or(Transport::kSdk));
  if (call.session != 0 && call.transport == "ws") {
    b.session_id("ws-" + std::to_string(call.session));
  }
  return b;
}

// The envelope of a failure; never fails itself (the fallback is a fixed, valid envelope).
json::object failure_envelope(const RpcCall& call, const Error& error, std::optional<Mvi> mvi) {
  Builder b = builder_for(call);
  if (mvi) b.mvi(*mvi);
  auto env = b.failure(to_lafs_error(error));
  if (env.ok()) return std::move(env).value();
  Builder fallback("hearth.rpc");
  auto last = fallback.failure(
      ErrorInfo::from_registry(kInternalUnexpected, "the error could not be enveloped"));
  return std::move(last).value();
}

}  // namespace

bool wants_envelope(const json::value& params) {
  const json::value* flag = json::member(params, kLafsParam);
  return flag != nullptr && flag->is_bool() && flag->get_bool();
}

json::object take_lafs_params(json::value& params) {
  json::object taken;
  if (!params.is_object()) return taken;
  auto& obj = params.get_object();
  for (auto key : kLafsMembers) {
    if (auto it = obj.find(key); it != obj.end()) {
      taken[key] = it->value();
      obj.erase(it);
    }
  }
  return taken;
}

Status check_lafs_params(const json::object& taken) {
  auto d = parse_disclosure(taken);
  if (!d.ok()) return std::move(d).error();
  return {};
}

std::string_view lafs_transport(std::string_view session_transport) {
  if (session_transport == "http") return "http";
  if (session_transport == "inproc") return "cli";
  return "sdk";
}

std::string request_id_for(const json::value& id) {
  if (id.is_string()) {
    std::string text = "rpc-" + std::string(id.get_string());
    return code_point_count(text) > 128 ? truncate_code_points(text, 128) : text;
  }
  if (id.is_number()) return "rpc-" + json::dump(id);
  return "req_" + random_hex(8);
}

json::object envelope_for_call(const RpcCall& call, const Result<json::value>& outcome) {
  auto disclosure = parse_disclosure(call.disclosure);
  if (!disclosure.ok()) return failure_envelope(call, disclosure.error(), std::nullopt);
  if (!outcome.ok()) return failure_envelope(call, outcome.error(), disclosure->mvi);
  Builder b = builder_for(call);
  auto env = b.success(outcome.value());
  if (!env.ok()) return failure_envelope(call, env.error(), disclosure->mvi);
  // No operation of hearth's JSON-RPC surface offers expansions yet: any _expand is unknown.
  if (auto st = apply_disclosure(env.value(), disclosure.value()); !st.ok()) {
    return failure_envelope(call, st.error(), disclosure->mvi);
  }
  return std::move(env).value();
}

}  // namespace hearth::lafs
