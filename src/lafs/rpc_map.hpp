#pragma once
/// One table between hearth's JSON-RPC / LAVS error codes and LAFS codes (docs/lafs.md has it in
/// prose). Every hearth error becomes a registered LAFS code, so that envelopes of failures pass
/// the conformance runner's `error_code_registered` check.

#include <span>
#include <string_view>

#include "common/error.hpp"
#include "lafs/envelope.hpp"

namespace hearth::lafs {

/// One row: a JSON-RPC code (and, for -32001, which kind of refusal) and its LAFS code.
struct RpcMapping {
  ErrorCode jsonrpc;
  std::string_view when;       ///< the case the row covers, as the docs say it
  std::string_view lafs_code;  ///< a registered code
  bool escalation_required;    ///< set on the LAFS error (operator action needed)
};

/// The whole table, in the order docs/lafs.md lists it.
std::span<const RpcMapping> rpc_mappings();

/// The LAFS error for a hearth error. `data.lafs = {code, details}` (set by make_error) names the
/// LAFS code exactly; otherwise the table decides. The details keep hearth's own: the JSON-RPC
/// code as `jsonrpcCode` and the members of `data`.
ErrorInfo to_lafs_error(const Error& error);

/// The JSON-RPC code a LAFS code travels with on hearth's JSON-RPC surface (make_error).
ErrorCode jsonrpc_code_for(std::string_view lafs_code);

}  // namespace hearth::lafs
