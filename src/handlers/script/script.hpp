#pragma once
/// The `script` handler kind (lavs-spec-v1 section 4.3): runs a command per call, as a child of
/// hearth-launch (see proc/process.hpp), and turns its stdout into the result.
///
/// Handler object:
///   command  string, required   program name (searched in the child's PATH) or a path with '/'
///                                (relative to the working directory); it must resolve inside
///                                the service folder or to a system program (handlers/script/
///                                program.hpp), checked at load and before each start
///   args     string[]            arguments; `{{path}}` placeholders are expanded (see below)
///   input    "stdin"|"args"|"env" how the input reaches the script (default "stdin")
///   cwd      string              working directory, relative to the service folder, must stay
///                                inside it (default: the service folder)
///   timeout  number >= 0 (ms)    0 or absent: the endpoint's time limit; a maxExecutionTime
///                                permission caps it in every case
///   env      {string: string}    variables set on top of the base environment
///   persistent true | {instances, maxCalls}
///                                one jailed process serves many calls over a line protocol
///                                instead of a process per call (handlers/script/persistent.hpp);
///                                instances 1-16 (default 1), maxCalls >= 0 (default 0: no
///                                limit). Requires input "stdin" and no placeholder in args.
///                                LAVS_PERSISTENT=1 is set in its environment.
///
/// --- Input modes (copied into docs/protocol.md) ---------------------------------------------
/// stdin (the default when `input` is absent)
///     The input is written to the script's stdin as one compact JSON text, then stdin is closed.
/// args
///     The input reaches the script only through `{{path}}` placeholders in `args`; stdin is empty
///     (/dev/null).
/// env
///     An allowlist: only the fields the endpoint's input schema declares (`properties`, also
///     through `$ref` to `#/types/Name` and `allOf`/`anyOf`/`oneOf`) become variables, named after
///     the key in upper case; nested declared objects are flattened with `_`: {"user": {"name":
///     "a"}} sets USER_NAME=a when `user` declares `name`. The names are therefore chosen by the
///     manifest's author, never by the input. At load, a declared field whose name would not be a
///     valid variable name ([A-Za-z_][A-Za-z0-9_]*) or would set a protected variable (PATH, HOME,
///     LD_*, BASH_ENV, ENV, BASH_FUNC_*, IFS, SHELLOPTS, BASHOPTS, PS4, NODE_OPTIONS, NODE_PATH,
///     PYTHON*, PERL5*, PERLLIB, RUBY*, JAVA_TOOL_OPTIONS, _JAVA_OPTIONS, GCONV_PATH, LOCPATH,
///     NLSPATH, HOSTALIASES, GLIBC_TUNABLES, MALLOC_*, TMPDIR, LAVS_*) refuses the endpoint. At
///     call time an input field the schema does not declare (additionalProperties) refuses the
///     call with -32602, data {field, constraint: "env-name"}; a value holding a NUL character is
///     -32602 with constraint "no-nul". Strings are passed as they are, other values (and objects
///     whose members are not declared) as compact JSON, null fields are skipped; a non-object
///     input sets nothing. stdin is empty.
/// Placeholders, in every mode (compatible with the reference runtime)
///     Each `{{path}}` in an element of `args` is replaced by the input value at `path`, a dot
///     path into the input (`{{user.name}}`; a numeric segment indexes an array: `{{tags.0}}`;
///     white space around the path is ignored). Strings are inserted as they are, numbers and
///     booleans as JSON text, objects and arrays as compact JSON, a missing value or null as the
///     empty string. Each element stays one argument: no shell is involved.
///
/// Environment: never the daemon's own. The base is PATH=/usr/local/sbin:/usr/local/bin:
/// /usr/sbin:/usr/bin:/sbin:/bin, LANG=C.UTF-8, HOME=<service folder>, LAVS_SERVICE=<name>,
/// LAVS_ENDPOINT=<id>, LAVS_SERVICE_DIR=<service folder>, LAVS_PUBLISH_FD=3 (calls only); the
/// handler's `env` is applied on top (it may replace PATH), then the env-mode input.
///
/// Output: stdout is the result. White space around it is ignored; nothing (or only white space)
/// is null; JSON text is parsed; any other text of a successful run is returned as one JSON string,
/// exactly as written (invalid UTF-8 replaced by U+FFFD). Errors (-32003 Handler error unless
/// noted): command not found (data {command}); "Handler exited with code N" (data {exitCode,
/// stderr}: the last 4 KiB of stderr); "Handler was killed by signal N (SIGNAME)" (data {signal,
/// stderr}); "Handler output exceeds N bytes"; -32002 "Handler timed out after N ms" (data
/// {timeoutMs}). The whole process group is killed when the script exits or times out.
///
/// Publishing (how a mutation notifies subscribers): every call gets fd 3 as a write-only pipe
/// (LAVS_PUBLISH_FD=3). Each line written there must be a JSON object
/// {"subscription": "<subscription endpoint id of this service>", "data": <any, default null>};
/// it is published to that endpoint's subscribers as soon as the line is complete. Malformed
/// lines and unknown subscriptions are logged and ignored: they never fail the call.
///
/// Subscriptions (open_stream): the command runs with the same input, environment (without
/// LAVS_PUBLISH_FD) and working directory rules, and no time limit, until the subscription is
/// closed. Each stdout line is one item: JSON text is sent parsed, other text as a string, blank
/// lines are skipped. Exit 0 ends the stream cleanly; anything else ends it with -32003
/// "Subscription handler exited with code N" (data {exitCode, stderr}) or "... killed by signal".

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "handlers/handler.hpp"

namespace hearth::handlers::script {

/// The script kind, to register under "script".
std::unique_ptr<Kind> make_kind(const KindOptions& options);

/// Replaces every `{{path}}` in `arg` by the input value at that dot path (see above).
std::string expand_placeholders(std::string_view arg, const json::value& input);

/// expand_placeholders for an argument of the command: a value holding a NUL character (which
/// would silently cut the argument) is -32602 naming the field, data {field, constraint: "no-nul"}.
Result<std::string> expand_argument(std::string_view arg, const json::value& input);

/// The input fields env mode may pass: the `properties` an input schema declares, with theirs.
struct EnvFields {
  std::map<std::string, EnvFields> fields;
};

/// The fields `schema` declares (following `#/types/Name` refs into `types`, local refs,
/// allOf/anyOf/oneOf).
EnvFields env_fields_from_schema(const json::value& schema, const json::object& types);

/// The fields the input schema of `endpoint_id` declares in `service.raw` (none without one).
EnvFields env_fields_of(const manifest::Manifest& service, std::string_view endpoint_id);

/// The variables env mode sets for `input`, in input order, or -32602 for a field that is not
/// declared in `declared` or a value with a NUL character.
Result<std::vector<std::pair<std::string, std::string>>> input_to_env(const json::value& input,
                                                                      const EnvFields& declared);

/// True for the variable names env-mode input may not set (PATH, LD_*, ...).
bool is_protected_env_name(std::string_view name);

/// True for [A-Za-z_][A-Za-z0-9_]*.
bool is_valid_env_name(std::string_view name);

}  // namespace hearth::handlers::script
