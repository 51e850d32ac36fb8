#pragma once
/// Envelope mode of hearth's JSON-RPC surface (docs/protocol.md, "LAFS envelopes"): a request that
/// asks for it (`params._lafs: true`, or the HTTP header `Prefer: lafs-envelope` for a whole body)
/// gets its outcome, result or error, as a LAFS envelope in the JSON-RPC `result`.
/// Transport independent: the dispatcher calls these with what it knows of the request.

#include <cstdint>
#include <string>

#include "common/result.hpp"
#include "json/json.hpp"

namespace hearth::lafs {

/// The request members that belong to LAFS rather than to the method.
inline constexpr std::string_view kLafsParam = "_lafs";

/// What the envelope of one JSON-RPC call is made from.
struct RpcCall {
  std::string operation;      ///< e.g. "todo-manager.addTodo" or "lavs/services"
  json::value id = nullptr;   ///< the JSON-RPC id (null for a request that could not be read)
  json::object disclosure;    ///< the request's _fields, _expand, _mvi, _budget members
  std::string transport;      ///< the session's: "http", "ws", "inproc"
  std::uint64_t session = 0;  ///< the session's id (0: none)
};

/// Whether `params` ask for an envelope (`_lafs: true`).
bool wants_envelope(const json::value& params);

/// Moves the LAFS members (_lafs, _fields, _expand, _mvi, _budget) out of `params` (an object)
/// into the returned object, so that the method sees only its own parameters.
json::object take_lafs_params(json::value& params);

/// Checks the LAFS members taken from a request before its method runs, so that a malformed
/// `_fields` or `_budget` fails the request without side effects (E_VALIDATION_SCHEMA,
/// E_MVI_BUDGET_EXCEEDED for a too deep `_expand`).
Status check_lafs_params(const json::object& taken);

/// `_meta.transport` for a session transport: http -> http; ws -> sdk (no HTTP status applies to
/// a message on a WebSocket); inproc (`hearth call`) -> cli.
std::string_view lafs_transport(std::string_view session_transport);

/// `_meta.requestId` for a JSON-RPC id: "rpc-" + the id as text (at most 128 characters), or a
/// fresh "req_" id when the id is null.
std::string request_id_for(const json::value& id);

/// The envelope of a call's outcome: a success envelope of the method's result (with the request's
/// `_fields`, `_expand`, `_mvi`, `_budget` applied), or a failure envelope of its error (mapped by
/// lafs::to_lafs_error; a disclosure error becomes the failure). Always schema-valid and passing
/// the conformance runner's standard tier.
json::object envelope_for_call(const RpcCall& call, const Result<json::value>& outcome);

}  // namespace hearth::lafs
