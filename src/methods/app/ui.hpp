#pragma once
/// The `app/ui/*` JSON-RPC methods (docs/app-server.md, "Host Bridge v1"): the host page lists
/// the apps' UI entries, mounts one for its WebSocket connection, forwards a frame's capability
/// calls (bound to the mount's app) and closes the mount.

#include "appui/appui.hpp"
#include "rpc/dispatcher.hpp"

namespace hearth::methods::app {

/// Registers app/ui/entries, app/ui/open, app/ui/invoke and app/ui/close. `ui` must outlive
/// their use.
void add_ui_methods(rpc::Dispatcher& dispatcher, appui::AppUiHost& ui);

}  // namespace hearth::methods::app
