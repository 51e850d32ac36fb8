#pragma once
/// What the view host sends, as text and headers, with no I/O (docs/view-host.md): the view
/// document of a mount, the security headers of every view file and of the host page, and the
/// content type of a file by its name.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "json/json.hpp"
#include "views/component.hpp"

namespace hearth::views {

using Headers = std::vector<std::pair<std::string, std::string>>;

/// JSON for a <script type="application/json"> element: '<', '>', '&', U+2028 and U+2029 are
/// escaped, so that no text can close the element or be read as markup.
std::string script_json(const json::value& value);

/// The view document of a mount: for an .html component, `html` with the config and bootstrap
/// tags put first in its <head> and `nonce` added to its own <script> tags; for every other
/// component, a document holding only those tags.
std::string view_document(const Component& component, const json::value& config,
                          std::string_view bootstrap_url, std::string_view html,
                          std::string_view nonce);

/// `html` with ` nonce="…"` added to every <script start tag (the document's own scripts may run
/// under a CSP whose script-src names the nonce).
std::string add_nonce(std::string_view html, std::string_view nonce);

/// The headers of every response below /views/<ticket>/ (CSP with the sandbox directive,
/// Permissions-Policy with every feature off, no referrer, CORS for the opaque origin).
/// `host` is the request's (checked) Host header: the page that may frame the view.
Headers view_headers(const Component& component, std::string_view host, std::string_view nonce);

/// The headers of the host page's files (/ui/): its CSP, no framing.
Headers page_headers(std::string_view host);

/// The content type of a served file, by its extension (application/octet-stream when unknown).
std::string content_type_of(std::string_view name);

}  // namespace hearth::views
