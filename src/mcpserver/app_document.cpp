#include "mcpserver/app_document.hpp"

#include "common/beneath.hpp"
#include "mcpserver/catalog.hpp"
#include "views/component.hpp"
#include "views/document.hpp"

namespace hearth::mcpserver {

namespace {

constexpr std::size_t kMaxComponentBytes = std::size_t{4} << 20;

// The bridge: MCP Apps on one side (postMessage JSON-RPC with the host window), the LAVS client
// of lavs-spec-v1 7.2 on the other. Reads its configuration from #hearth-mcp-app.
constexpr std::string_view kBridge = R"JS(
(function () {
  'use strict';
  var config = JSON.parse(document.getElementById('hearth-mcp-app').textContent);
  var pending = new Map();
  var nextId = 1;
  function send(message) { window.parent.postMessage(message, '*'); }
  function request(method, params) {
    return new Promise(function (resolve, reject) {
      var id = nextId++;
      pending.set(id, { resolve: resolve, reject: reject });
      send({ jsonrpc: '2.0', id: id, method: method, params: params || {} });
    });
  }
  window.addEventListener('message', function (event) {
    if (event.source !== window.parent) return;
    var m = event.data;
    if (!m || m.jsonrpc !== '2.0' || m.id === undefined || m.method !== undefined) return;
    var p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (m.error) p.reject(new Error(m.error.message || 'request failed'));
    else p.resolve(m.result);
  });
  function resultOf(r) {
    if (!r) throw new Error('no result');
    var text = r.content && r.content[0] && r.content[0].text;
    if (r.isError) throw new Error(text || 'the tool failed');
    return text === undefined ? r.structuredContent : JSON.parse(text);
  }
  var ready = request('ui/initialize', {
    protocolVersion: '2026-01-26',
    appCapabilities: {},
    appInfo: { name: config.service, version: config.version }
  }).then(function (r) {
    send({ jsonrpc: '2.0', method: 'ui/notifications/initialized', params: {} });
    return r;
  });
  var client = {
    call: function (endpoint, input) {
      var name = config.tools[endpoint];
      if (!name) return Promise.reject(new Error('no endpoint ' + endpoint));
      return ready.then(function () {
        return request('tools/call', { name: name, arguments: input || {} });
      }).then(resultOf);
    },
    subscribe: function (endpoint, callback) {
      var uri = config.subscriptions[endpoint];
      if (!uri) throw new Error('no subscription ' + endpoint);
      // MCP Apps give a view no notifications: the latest item is read now and then.
      var stopped = false;
      var last = null;
      function poll() {
        if (stopped) return;
        ready.then(function () { return request('resources/read', { uri: uri }); })
          .then(function (r) {
            var text = r && r.contents && r.contents[0] && r.contents[0].text;
            if (text && text !== 'null' && text !== last) { last = text; callback(JSON.parse(text)); }
          })
          .catch(function () {})
          .then(function () { if (!stopped) setTimeout(poll, 2000); });
      }
      poll();
      return function () { stopped = true; };
    },
    getManifest: function () { return Promise.resolve(config.manifest); },
    readFile: function (path) {
      return ready.then(function () {
        return request('resources/read', { uri: config.dir + '/' + path });
      }).then(function (r) {
        var c = r && r.contents && r.contents[0];
        if (!c) throw new Error('no such file');
        return c.text !== undefined ? c.text : atob(c.blob);
      });
    }
  };
  window.lavsClient = client;
  function mount() {
    var targets = Array.prototype.filter.call(document.querySelectorAll('*'), function (e) {
      return typeof e.setLAVSClient === 'function';
    });
    targets.forEach(function (t) { t.setLAVSClient(client); });
    window.dispatchEvent(new CustomEvent('lavs-client', { detail: client }));
  }
  window.__hearthMount = mount;
})();
)JS";

std::string escape_attribute(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
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

/// Script text must not close its element.
std::string script_text(std::string_view code) {
  std::string out(code);
  for (std::size_t at = 0; (at = out.find("</", at)) != std::string::npos; at += 3) {
    out.replace(at, 2, "<\\/");
  }
  return out;
}

// Loads the element module and mounts the first custom element it defines.
constexpr std::string_view kModuleMount = R"JS(
var defined = [];
var original = customElements.define.bind(customElements);
customElements.define = function (name, cls, options) { defined.push(name); return original(name, cls, options); };
)JS";

}  // namespace

Result<AppDocument> app_document(const host::Host::Service& service,
                                 const std::vector<std::string>& cdn_origins,
                                 const json::object& tool_names) {
  const auto& m = service.manifest;
  HEARTH_ASSIGN_OR_RETURN(views::Component component, views::resolve(m.dir, m.view, cdn_origins));
  json::object subscriptions;
  for (const auto& e : m.endpoints) {
    if (e.method == manifest::Method::kSubscription) {
      subscriptions[e.id] = subscription_uri(m.name, e.id);
    }
  }
  json::object config{{"service", m.name},   {"version", m.version},
                      {"tools", tool_names}, {"subscriptions", std::move(subscriptions)},
                      {"manifest", m.raw},   {"dir", file_uri(m.dir.string())}};
  AppDocument doc;
  std::string body;
  switch (component.type) {
    case views::Component::Type::kNpm:
      return Error::make(ErrorCode::kInvalidParams,
                         "the view of " + m.name +
                             " is an npm package: hearth's view host serves it (/ui/), an MCP App "
                             "must be one document");
    case views::Component::Type::kLocal: {
      auto text = read_beneath(component.base, component.entry, kMaxComponentBytes);
      if (!text) {
        return Error::make(ErrorCode::kInvalidParams, "the view file " + component.entry + " of " +
                                                          m.name + " cannot be read");
      }
      if (component.html) {
        body = "__HTML__";
        doc.html = *text;
      } else {
        body = "<script type=\"module\">" + std::string(kModuleMount) + script_text(*text) +
               "\nvar first = defined[0];\nif (first) { document.body.appendChild("
               "document.createElement(first)); }\nwindow.__hearthMount();\n</script>";
      }
      break;
    }
    case views::Component::Type::kInline:
      body = "<script type=\"module\">" + std::string(kModuleMount) + script_text(component.code) +
             "\nvar first = defined[0];\nif (first) { document.body.appendChild("
             "document.createElement(first)); }\nwindow.__hearthMount();\n</script>";
      break;
    case views::Component::Type::kCdn:
      doc.resource_domains.push_back(component.script_origin);
      body = "<script type=\"module\">" + std::string(kModuleMount) + "import(" +
             script_text(json::dump(json::value(component.module))) +
             ").then(function (mod) {\n  var first = defined[0];\n  var cls = mod[" +
             script_text(json::dump(json::value(
                 component.export_name.empty() ? std::string("default") : component.export_name))) +
             "];\n  if (!first && typeof cls === 'function') { first = 'lavs-view-app'; "
             "original(first, cls); }\n  if (first) document.body.appendChild("
             "document.createElement(first));\n  window.__hearthMount();\n});\n</script>";
      break;
  }
  const std::string head = "<script type=\"application/json\" id=\"hearth-mcp-app\">" +
                           views::script_json(config) + "</script>\n<script>" +
                           std::string(kBridge) + "</script>\n";
  if (body == "__HTML__") {
    // The component's own document, the bridge first in its <head>; its elements get the client
    // once it has loaded.
    std::string html = std::move(doc.html);
    const std::size_t head_at = html.find("<head>");
    const std::string tail =
        "<script>window.addEventListener('DOMContentLoaded', function () { "
        "window.__hearthMount(); });</script>\n";
    if (head_at != std::string::npos) {
      html.insert(head_at + 6, "\n" + head + tail);
    } else {
      html = head + tail + html;
    }
    doc.html = std::move(html);
    return doc;
  }
  doc.html = "<!doctype html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n<title>" +
             escape_attribute(m.name) + "</title>\n" + head + "</head>\n<body>\n" + body +
             "\n</body>\n</html>\n";
  return doc;
}

}  // namespace hearth::mcpserver
