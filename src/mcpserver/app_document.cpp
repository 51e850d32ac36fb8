#include "mcpserver/app_document.hpp"

#include "common/beneath.hpp"
#include "mcpserver/app_bridge_js.hpp"
#include "mcpserver/catalog.hpp"
#include "views/bundle.hpp"
#include "views/component.hpp"
#include "views/document.hpp"

namespace hearth::mcpserver {

namespace {

constexpr std::size_t kMaxComponentBytes = std::size_t{4} << 20;

std::string escape_text(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

/// The module script that mounts a module component: `code` defines it (may be empty), `entry`
/// is an expression giving a promise of its namespace.
std::string module_script(std::string_view code, std::string_view entry,
                          std::string_view export_name) {
  return "<script type=\"module\">\n" + views::script_text(code) + "\nhearthMcpApp.mountModule(" +
         views::script_text(entry) + ", " +
         views::script_text(json::dump(json::value(std::string(export_name)))) + ");\n</script>";
}

}  // namespace

Result<AppDocument> app_document(const host::Host::Service& service,
                                 const std::vector<std::string>& cdn_origins,
                                 const std::map<std::string, AppTool, std::less<>>& tools) {
  const auto& m = service.manifest;
  HEARTH_ASSIGN_OR_RETURN(views::Component component, views::resolve(m.dir, m.view, cdn_origins));
  json::object subscriptions;
  for (const auto& e : m.endpoints) {
    if (e.method == manifest::Method::kSubscription) {
      subscriptions[e.id] = subscription_uri(m.name, e.id);
    }
  }
  json::object tool_config;
  for (const auto& [endpoint, tool] : tools) {
    tool_config[endpoint] = json::object{
        {"name", tool.name}, {"mutation", tool.mutation}, {"wrapInput", tool.wrap_input}};
  }
  json::object config{{"service", m.name},
                      {"version", m.version},
                      {"tools", std::move(tool_config)},
                      {"subscriptions", std::move(subscriptions)},
                      {"manifest", m.raw},
                      {"dir", file_uri(m.dir.string())}};
  const std::string head = "<script type=\"application/json\" id=\"hearth-mcp-app\">" +
                           views::script_json(config) + "</script>\n<script>\n" +
                           views::script_text(kAppBridgeJs) + "</script>\n";
  AppDocument doc;
  std::string body;
  views::BundleLimits limits;
  limits.max_bytes = kMaxComponentBytes;
  switch (component.type) {
    case views::Component::Type::kLocal: {
      if (component.html) {
        auto text = read_beneath(component.base, component.entry, kMaxComponentBytes);
        if (!text) {
          return Error::make(ErrorCode::kInvalidParams, "the view file " + component.entry +
                                                            " of " + m.name + " cannot be read");
        }
        // The component's own document, the bridge first in its <head>; its elements get the
        // client once it has been parsed.
        std::string html = std::move(*text);
        const std::string tags = head + "<script>hearthMcpApp.mountHtml();</script>\n";
        const std::size_t head_at = html.find("<head>");
        if (head_at != std::string::npos) {
          html.insert(head_at + 6, "\n" + tags);
        } else {
          html = tags + html;
        }
        doc.html = std::move(html);
        return doc;
      }
      HEARTH_ASSIGN_OR_RETURN(views::Bundle bundle,
                              views::bundle_modules(component.base, component.entry, std::nullopt,
                                                    !component.entry_only, limits));
      body = module_script(bundle.script, bundle.entry, component.export_name);
      break;
    }
    case views::Component::Type::kInline: {
      HEARTH_ASSIGN_OR_RETURN(
          views::Bundle bundle,
          views::bundle_modules(m.dir, "inline.js", component.code, false, limits));
      body = module_script(bundle.script, bundle.entry, component.export_name);
      break;
    }
    case views::Component::Type::kNpm: {
      HEARTH_ASSIGN_OR_RETURN(
          views::Bundle bundle,
          views::bundle_modules(component.base, component.entry, std::nullopt, true, limits));
      body = module_script(bundle.script, bundle.entry, component.export_name);
      break;
    }
    case views::Component::Type::kCdn:
      doc.resource_domains.push_back(component.script_origin);
      body = module_script({}, "import(" + json::dump(json::value(component.module)) + ")",
                           component.export_name);
      break;
  }
  doc.html =
      "<!doctype html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" "
      "content=\"width=device-width, initial-scale=1\">\n<title>" +
      escape_text(m.name) + "</title>\n" + head + "</head>\n<body>\n" + body +
      "\n</body>\n</html>\n";
  return doc;
}

}  // namespace hearth::mcpserver
