#pragma once
/// JSON-RPC 2.0 (https://www.jsonrpc.org/specification): parsing of single requests and batches,
/// notifications, error objects, and dispatch of methods by name. Transport independent.

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.hpp"
#include "json/json.hpp"
#include "rpc/session.hpp"

namespace hearth::rpc {

/// Work a method leaves for right after its answer is written (on the connection's strand, in
/// order): a subscription's first items must reach the client after the subscription id does.
using AfterReply = std::vector<std::function<void()>>;

/// What a method implementation receives.
struct Request {
  json::value id;  ///< string, number or null; absent for notifications
  bool notification = false;
  std::string method;
  /// Object, array or null when absent. Mutable so that a method may move a large member out
  /// (rpc::take_param) rather than copy it: the request is its call's own.
  mutable json::value params;
  std::shared_ptr<Session> session;
  bool envelope = false;  ///< answer with a LAFS envelope (docs/protocol.md, "LAFS envelopes")
  json::object lafs;  ///< in envelope mode: _fields, _expand, _mvi, _budget, taken out of params
  /// Where to leave work for after the answer; null when the transport runs none (then the
  /// method does it at once).
  AfterReply* after_reply = nullptr;
  /// Outside envelope mode, a method whose result is JSON text it keeps ready (a manifest) may
  /// put that text here and return null: the text is written as the result, unparsed and
  /// uncopied. Null in envelope mode, where the envelope needs the value.
  std::shared_ptr<const std::string>* raw_result = nullptr;
};

/// Per-message options a transport passes along.
struct CallOptions {
  bool envelope = false;  ///< every request of the message is answered with a LAFS envelope
  /// Filled by methods; the transport runs it right after writing the answer (or, for
  /// notifications, after the method ran). Must outlive the handle() call.
  AfterReply* after_reply = nullptr;
};

using Method = std::function<boost::asio::awaitable<Result<json::value>>(const Request&)>;

struct DispatcherLimits {
  std::size_t max_batch = 100;  ///< larger batches are answered with one -32600 error
  std::size_t max_depth = 64;   ///< JSON nesting limit
};

/// A call the dispatcher finished: what the daemon's per-call log line says.
struct CallRecord {
  const Request& request;
  const Error* error;  ///< null when the call succeeded
  std::chrono::steady_clock::duration elapsed;
};

class Dispatcher {
 public:
  explicit Dispatcher(DispatcherLimits limits = {}) : limits_(limits) {}

  /// Registers a method. Not thread-safe: register everything before serving.
  void add(std::string name, Method method);

  /// Names a request's operation in LAFS envelopes (`_meta.operation`); default: the method.
  using OperationNamer = std::function<std::string(const Request&)>;
  void set_operation_namer(OperationNamer namer) { operation_namer_ = std::move(namer); }

  /// Told of every call that reached a method, once it finished (on the thread that ran it).
  /// Not thread-safe to set: set before serving.
  using Observer = std::function<void(const CallRecord&)>;
  void set_observer(Observer observer) { observer_ = std::move(observer); }

  /// Handles one message (a request, a notification or a batch) and returns the response text,
  /// or nullopt when nothing is to be sent back (notifications only). Batch members run
  /// concurrently; responses keep the request order.
  boost::asio::awaitable<std::optional<std::string>> handle(std::string_view text,
                                                            std::shared_ptr<Session> session,
                                                            CallOptions options = {}) const;

  /// Same, for an already parsed message.
  boost::asio::awaitable<std::optional<json::value>> handle_value(json::value message,
                                                                  std::shared_ptr<Session> session,
                                                                  CallOptions options = {}) const;

 private:
  /// What the parser noticed about one request's numbers (see json::parse_message).
  struct Numbers {
    std::string id_text;                            ///< the id exactly as written, when kept
    const json::RawNumber* out_of_range = nullptr;  ///< the first number the DOM changed
  };
  /// A response, with the id's text to write in place of the DOM's id when set.
  struct Reply {
    json::value body;
    std::string id_text;
    std::shared_ptr<const std::string> raw_result;  ///< the result's text (body has null there)
  };
  static std::string to_text(const Reply& reply);
  /// An array that is answered with an array (not refused whole as empty or too large).
  bool is_batch(const json::value& message) const {
    return message.is_array() && !message.get_array().empty() &&
           message.get_array().size() <= limits_.max_batch;
  }

  boost::asio::awaitable<std::optional<Reply>> handle_one(json::value message,
                                                          std::shared_ptr<Session> session,
                                                          CallOptions options,
                                                          Numbers numbers) const;
  boost::asio::awaitable<std::optional<std::vector<Reply>>> handle_parsed(
      json::value message, std::shared_ptr<Session> session, CallOptions options,
      const std::vector<json::RawNumber>& raw) const;
  /// The error response, or in envelope mode a result response holding the failure envelope.
  json::object error_response(const json::value& id, const Error& error, const Request* request,
                              const std::shared_ptr<Session>& session, bool envelope) const;

  DispatcherLimits limits_;
  OperationNamer operation_namer_;
  Observer observer_;
  std::map<std::string, Method, std::less<>> methods_;
};

/// {"jsonrpc":"2.0","id":id,"error":{...}}
json::object make_error_response(const json::value& id, const Error& error);
/// {"jsonrpc":"2.0","id":id,"result":result}
json::object make_result_response(const json::value& id, json::value result);
/// {"jsonrpc":"2.0","method":method,"params":params}
json::object make_notification(std::string_view method, json::value params);

}  // namespace hearth::rpc
