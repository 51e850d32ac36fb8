#pragma once
/// The `lavs/*` JSON-RPC methods (lavs-spec-v1 5): call, subscribe, unsubscribe, manifest,
/// services and readFile, over a Host. Each method reads its parameters (rpc/params.hpp), asks
/// the host, and records calls in the audit log.

#include "host/host.hpp"
#include "rpc/dispatcher.hpp"

namespace hearth::methods::lavs {

/// Registers the lavs/* methods on `dispatcher`. The host must outlive the dispatcher's use.
void add_methods(rpc::Dispatcher& dispatcher, host::Host& host);

/// LAFS envelope mode (docs/lafs.md): `_meta.operation` is "service.endpoint" for lavs/call
/// and lavs/subscribe, the method otherwise (`hearth call --lafs` and the daemon).
void name_lafs_operations(rpc::Dispatcher& dispatcher, const host::Host& host);

}  // namespace hearth::methods::lavs
