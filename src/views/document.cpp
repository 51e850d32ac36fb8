#include "views/document.hpp"

#include <array>

#include "common/ascii.hpp"

namespace hearth::views {

namespace {

/// Every feature a view could ask the browser for, off. Only features Chromium knows: an unknown
/// one is logged in the console on every response.
constexpr std::array kPolicyFeatures = {"accelerometer",
                                        "autoplay",
                                        "camera",
                                        "clipboard-read",
                                        "clipboard-write",
                                        "display-capture",
                                        "encrypted-media",
                                        "fullscreen",
                                        "gamepad",
                                        "geolocation",
                                        "gyroscope",
                                        "hid",
                                        "idle-detection",
                                        "magnetometer",
                                        "microphone",
                                        "midi",
                                        "payment",
                                        "picture-in-picture",
                                        "publickey-credentials-get",
                                        "screen-wake-lock",
                                        "serial",
                                        "usb",
                                        "xr-spatial-tracking"};

std::string permissions_policy() {
  std::string out;
  for (const char* feature : kPolicyFeatures) {
    if (!out.empty()) out += ", ";
    out += feature;
    out += "=()";
  }
  return out;
}

/// Where the tags go in an html document: after its <head ...>, else after <html ...>, else at
/// the start (after a doctype).
std::size_t insertion_point(std::string_view html) {
  const std::string lower = ascii::lower(html);
  for (const char* tag : {"<head", "<html"}) {
    std::size_t at = 0;
    while ((at = lower.find(tag, at)) != std::string::npos) {
      const std::size_t after = at + std::string_view(tag).size();
      if (after < lower.size() && (lower[after] == '>' || ascii::is_space(lower[after]))) {
        const std::size_t close = lower.find('>', after);
        if (close != std::string::npos) return close + 1;
      }
      at = after;
    }
  }
  if (ascii::istarts_with(html, "<!doctype")) {
    const std::size_t close = html.find('>');
    if (close != std::string_view::npos) return close + 1;
  }
  return 0;
}

}  // namespace

std::string add_nonce(std::string_view html, std::string_view nonce) {
  const std::string lower = ascii::lower(html);
  std::string out;
  out.reserve(html.size() + 64);
  std::size_t copied = 0;
  std::size_t at = 0;
  while ((at = lower.find("<script", at)) != std::string::npos) {
    const std::size_t after = at + 7;
    if (after < lower.size() &&
        (lower[after] == '>' || ascii::is_space(lower[after]) || lower[after] == '/')) {
      out.append(html.substr(copied, after - copied));
      out += " nonce=\"";
      out += nonce;
      out += '"';
      copied = after;
    }
    at = after;
  }
  out.append(html.substr(copied));
  return out;
}

std::string script_json(const json::value& value) {
  const std::string text = json::dump(value);
  std::string out;
  out.reserve(text.size() + 16);
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '<') {
      out += "\\u003c";
    } else if (c == '>') {
      out += "\\u003e";
    } else if (c == '&') {
      out += "\\u0026";
    } else if (c == '\xe2' && i + 2 < text.size() && text[i + 1] == '\x80' &&
               (text[i + 2] == '\xa8' || text[i + 2] == '\xa9')) {
      out += text[i + 2] == '\xa8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

std::string view_document(const Component& component, const json::value& config,
                          std::string_view bootstrap_url, std::string_view html,
                          std::string_view nonce) {
  std::string tags;
  tags += "<script type=\"application/json\" id=\"hearth-view-config\">";
  tags += script_json(config);
  tags += "</script><script src=\"";
  tags += bootstrap_url;  // built by the view host from the ticket: hex and '/' only
  tags += "\"></script>";
  if (!component.html) {
    return "<!doctype html>\n<html><head><meta charset=\"utf-8\">"
           "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">" +
           tags + "</head><body></body></html>\n";
  }
  const std::string with_nonce = add_nonce(html, nonce);
  const std::size_t at = insertion_point(with_nonce);
  std::string out;
  out.reserve(with_nonce.size() + tags.size());
  out.append(with_nonce, 0, at);
  out += tags;
  out.append(with_nonce, at);
  return out;
}

Headers view_headers(const Component& component, std::string_view host, std::string_view nonce) {
  std::string script_src = "'self'";
  if (!nonce.empty()) {
    script_src += " 'nonce-";
    script_src += nonce;
    script_src += "'";
  }
  if (!component.script_origin.empty()) {
    script_src += ' ';
    script_src += component.script_origin;
  }
  std::string csp =
      "default-src 'none'; script-src " + script_src +
      "; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self'; "
      "media-src 'self'; connect-src 'none'; frame-src 'none'; worker-src 'none'; "
      "object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors http://" +
      std::string(host) + "; sandbox allow-scripts allow-forms";
  return {
      {"Content-Security-Policy", std::move(csp)},
      {"Permissions-Policy", permissions_policy()},
      {"Referrer-Policy", "no-referrer"},
      // Module scripts of an opaque origin are CORS requests: without this they do not load.
      {"Access-Control-Allow-Origin", "*"},
      {"Cross-Origin-Resource-Policy", "cross-origin"},
      {"Cache-Control", "no-store"},
  };
}

Headers page_headers(std::string_view host) {
  std::string csp =
      "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
      "connect-src 'self' ws://" +
      std::string(host) +
      "; frame-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; "
      "frame-ancestors 'none'";
  return {
      {"Content-Security-Policy", std::move(csp)},
      {"Permissions-Policy", permissions_policy()},
      {"Referrer-Policy", "no-referrer"},
      {"X-Frame-Options", "DENY"},
      {"Cross-Origin-Opener-Policy", "same-origin"},
      {"Cache-Control", "no-cache"},
  };
}

std::string content_type_of(std::string_view name) {
  const std::size_t dot = name.rfind('.');
  const std::string ext = dot == std::string_view::npos ? "" : ascii::lower(name.substr(dot + 1));
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 22> kTypes = {{
      {"html", "text/html; charset=utf-8"},
      {"htm", "text/html; charset=utf-8"},
      {"js", "text/javascript; charset=utf-8"},
      {"mjs", "text/javascript; charset=utf-8"},
      {"css", "text/css; charset=utf-8"},
      {"json", "application/json"},
      {"map", "application/json"},
      {"svg", "image/svg+xml"},
      {"png", "image/png"},
      {"jpg", "image/jpeg"},
      {"jpeg", "image/jpeg"},
      {"gif", "image/gif"},
      {"webp", "image/webp"},
      {"ico", "image/x-icon"},
      {"woff2", "font/woff2"},
      {"woff", "font/woff"},
      {"txt", "text/plain; charset=utf-8"},
      {"md", "text/markdown; charset=utf-8"},
      {"csv", "text/csv; charset=utf-8"},
      {"yaml", "application/yaml"},
      {"yml", "application/yaml"},
      {"wasm", "application/wasm"},
  }};
  for (const auto& [e, type] : kTypes) {
    if (e == ext) return std::string(type);
  }
  return "application/octet-stream";
}

}  // namespace hearth::views
