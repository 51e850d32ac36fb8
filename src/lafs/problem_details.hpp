#pragma once
/// RFC 9457 problem details from LAFS errors, for HTTP clients that ask for them
/// (`Accept: application/problem+json`).

#include <string_view>

#include "json/json.hpp"
#include "lafs/envelope.hpp"

namespace hearth::lafs {

inline constexpr std::string_view kProblemContentType = "application/problem+json";

/// {type, title, status, detail, instance?, retryable, agentAction?, retryAfterMs?,
/// escalationRequired?, suggestedAction?, docUrl?, code} plus the error's details as extension
/// members (never overwriting the standard ones). `type` is the registry's type URI ("about:blank"
/// for an unregistered code, as RFC 9457 says), `status` its HTTP status (500 when unregistered).
json::object problem_details(const ErrorInfo& error, std::string_view request_id = {});

/// The HTTP status of a LAFS error (the registry's, 500 when unregistered).
int http_status(const ErrorInfo& error);

}  // namespace hearth::lafs
