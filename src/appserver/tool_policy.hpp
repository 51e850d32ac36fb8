#pragma once
/// How the App Server runs the tools of an app's own (docs/app-server.md, "Tools and their
/// policies"): the tools its backends list, and the bound toolRefs, each under the operation
/// the app declares for it (the format's operations contract, app.operations.yaml; an
/// operation's `key` is the tool's name). Pure functions: the server applies them.

#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.hpp"
#include "json/json.hpp"

namespace hearth::appserver {

struct ToolPolicy {
  std::string operation;    ///< the declaring operation's key; empty: none declares the tool
  std::string side_effect;  ///< as declared; "unknown" when no operation declares one
  /// The call waits for the person (action.required, then action/respond).
  bool approval = true;
  /// The tool is called with `dryRun: true` first and the person sees that result in the
  /// approval request; only then is it called for real.
  bool dry_run = false;
  /// Its arguments and result are recorded in the app's evidence (agent.tool.called).
  bool evidence = true;
  /// Why it waits or runs without waiting, in words (for the action, the events, the model).
  std::string why;

  json::object to_json() const;
};

/// The policy of a tool that `operation` declares (null: none does, so its side effect is
/// unknown). The format's rules: `approvalRequired` waits; publish, delete and bulk-update side
/// effects (and unknown ones) always wait and never auto-execute; `autoExecute: true` or an
/// explicit `approvalRequired: false` runs without waiting, and so does a side effect of
/// `none`; any other side effect waits. `dryRunRequired` asks for a dry run first. Evidence of
/// arguments and result: `evidenceRequired`, or any side effect but `none`.
ToolPolicy policy_for(const json::object* operation);

/// The policy of a bound tool no operation declares: when it writes (a LAVS mutation, a
/// registry call, a workspace script) it waits and its arguments and result are evidenced.
ToolPolicy policy_of_binding(bool writes);

/// The operation whose key is `key`, or null.
const json::object* find_operation(const json::array& operations, std::string_view key);

/// Whether a tool's input schema has a `dryRun` property: the only way hearth can ask it for a
/// dry run (a tool that must do one and cannot is not offered).
bool takes_dry_run(const json::value& input_schema);

/// The model's names of backend tools ({service, name} each, in order): the tool's own name
/// when it is a valid function name ([a-zA-Z0-9_-], 1-64), not in `reserved` and not listed by
/// another backend of the app; else `<service>__<name>` with every other character made '_',
/// cut to 64 (and numbered when that still collides).
std::vector<std::string> backend_tool_names(
    const std::vector<std::pair<std::string, std::string>>& tools,
    const std::set<std::string>& reserved);

/// A tools/call result (MCP's shape: {content: [...], structuredContent?, isError?}) as the
/// model reads it: the structured content when there is some, else the text of the content
/// blocks joined (other blocks as they are); isError becomes an error with that text.
Result<json::value> read_tool_result(const json::value& result);

/// `value` when its JSON is at most `limit` bytes, else {elided: true, bytes, sha256}: what
/// evidence keeps of arguments and results.
json::value bounded(const json::value& value, std::size_t limit = std::size_t{16} * 1024);

}  // namespace hearth::appserver
