#pragma once
/// The `a2s` handler kind (docs/a2s.md, "LAVS endpoints backed by a capability"): an endpoint
/// that executes a capability of the daemon's A2S registry, so views and agents reach registry
/// services through LAVS, with its validation, permissions and audit.
///
/// Handler object:
///   service     string, required   a serviceName of the registry
///   capability  string, required   one of its capabilities
///   variables   {NAME: value}      each variable's value: a literal, or {"input": "field"} for
///                                  the input member `field` (a dotted path: "trip.date");
///                                  input members named like the capability's variables are
///                                  passed too, unless `variables` names them
///   output      "body" | "result"  what a call returns when the service answered 2xx: the
///                                  response body (default) or the whole registry/execute result
///
/// Every other outcome (the service failed, variables are missing, rate limited) is -32003 with
/// the registry/execute result as its data, so a caller sees what to do. The endpoint's
/// networkAccess must allow the service's domain (as for http handlers): a registry service
/// does not widen what a manifest declared. Subscriptions are refused at load.

#include <memory>

#include "handlers/handler.hpp"

namespace hearth::handlers::a2s {

/// The a2s kind, to register under "a2s".
std::unique_ptr<Kind> make_kind(const KindOptions& options);

}  // namespace hearth::handlers::a2s
