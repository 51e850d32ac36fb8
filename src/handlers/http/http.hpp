#pragma once
/// The `http` handler kind (lavs-spec-v1 section 4.3, HTTPHandler): each call is one HTTP request
/// made by the daemon itself (httpclient::Client, one per kind instance), and the response is the
/// result. No process, no jail: hearth checks the endpoint's networkAccess itself.
///
/// Handler object:
///   url      string, required   absolute http:// or https:// URL without credentials; `{name}`
///                                placeholders only in the path (name: [A-Za-z_][A-Za-z0-9_-]*)
///   method   string, required   GET, POST, PUT, PATCH, DELETE or HEAD (any case)
///   headers  {string: string}    sent with every request; names must be tokens, values without
///                                CR/LF/NUL; Host, Content-Length, Connection, Transfer-Encoding
///                                are refused (the client sets them)
///   timeout  number >= 0 (ms)    as for scripts: 0 or absent is the endpoint's limit; a
///                                maxExecutionTime permission caps it
/// Other members are ignored, as for the other kinds. Subscription endpoints cannot have an http
/// handler: the manifest is refused at load ("http handlers cannot serve subscriptions"; the
/// loader does not give Kind::parse the method, so create() refuses it, which the host reports
/// as a load problem of the endpoint's handler).
///
/// --- The request (copied into docs/protocol.md) -----------------------------------------------
/// Path placeholders
///     `{name}` is replaced by the top-level input member `name`: a string as it is, a number or
///     boolean as JSON text, percent-encoded as one path segment (so a `/` in a value cannot add
///     segments). A missing or null member, an object or an array is -32602 Invalid params (data
///     {field, constraint: "url-path"}); so is a value that leaves its segment empty, "." or "..".
///     Members used by placeholders are not sent again below.
/// GET, DELETE, HEAD
///     The other members of the input object become query parameters, appended to any query in
///     the URL, in input order: strings as they are, numbers and booleans as JSON text, arrays as
///     one parameter per element (elements as above; objects and arrays inside as compact JSON;
///     null elements skipped), objects as compact JSON, null members skipped. Names and values are
///     percent-encoded. A non-object input other than null is -32602.
/// POST, PUT, PATCH
///     The input (an object without the placeholder members; any other JSON value as it is) is the
///     body, compact JSON, with `Content-Type: application/json` unless `headers` sets one. A null
///     input sends no body.
/// Headers
///     `Accept: application/json, */*;q=0.5` and `User-Agent: hearth/<version>` unless `headers`
///     sets them; then the handler's `headers`.
///
/// --- networkAccess ---------------------------------------------------------------------------
/// The endpoint's effective networkAccess decides, before anything is sent: absent or false, every
/// call is -32001; true, any host; a list (egress::AllowList entries), the URL's host and port
/// must match an entry, and a name must not resolve to a local address (loopback, link-local,
/// multicast...: egress::is_local_address) unless it is `localhost` itself or the list names the
/// address: -32001 otherwise, before connecting. Each redirect hop is checked the same way. This
/// check is hearth's own, so it applies with --insecure-no-sandbox too.
///
/// --- The response ------------------------------------------------------------------------------
/// 2xx: an empty body is null; a Content-Type of application/json or */*+json is parsed (invalid
/// JSON is -32003 saying so); anything else is returned as a string (invalid UTF-8 replaced by
/// U+FFFD). Other statuses: -32003 "HTTP <status> from <METHOD> <url without query>", data {status,
/// body: the first KiB as text, contentType (null when absent)}. Redirects are followed (at most 5,
/// never from https to http); the body is limited to the daemon's output limit (-32003). The time
/// limit is -32002 "Handler timed out after N ms" (data {timeoutMs}); network and TLS failures are
/// -32003 with the reason.

#include <memory>

#include "handlers/handler.hpp"

namespace hearth::handlers::http {

/// The http kind, to register under "http".
std::unique_ptr<Kind> make_kind(const KindOptions& options);

}  // namespace hearth::handlers::http
