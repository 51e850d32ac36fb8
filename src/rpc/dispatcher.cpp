#include "rpc/dispatcher.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <exception>
#include <vector>

#include "lafs/rpc_envelope.hpp"

namespace hearth::rpc {
namespace asio = boost::asio;

json::object make_error_response(const json::value& id, const Error& error) {
  json::object out;
  out.reserve(3);
  out["jsonrpc"] = "2.0";
  out["id"] = id;
  out["error"] = to_json(error);
  return out;
}

json::object make_result_response(const json::value& id, json::value result) {
  json::object out;
  out.reserve(3);
  out["jsonrpc"] = "2.0";
  out["id"] = id;
  out["result"] = std::move(result);
  return out;
}

json::object make_notification(std::string_view method, json::value params) {
  json::object out;
  out.reserve(3);
  out["jsonrpc"] = "2.0";
  out["method"] = method;
  out["params"] = std::move(params);
  return out;
}

void Dispatcher::add(std::string name, Method method) {
  methods_[std::move(name)] = std::move(method);
}

namespace {

Error invalid_request(const std::string& why, std::string_view field) {
  json::object data;
  data["reason"] = why;
  if (!field.empty()) data["field"] = field;
  return Error::make(ErrorCode::kInvalidRequest, "Invalid Request: " + why, std::move(data));
}

bool valid_id(const json::value& id) {
  return id.is_string() || id.is_number() || id.is_null();
}

lafs::RpcCall lafs_call(const json::value& id, std::string operation,
                        const json::object& disclosure, const std::shared_ptr<Session>& session) {
  return lafs::RpcCall{std::move(operation), id, disclosure,
                       session ? session->transport() : std::string(), session ? session->id() : 0};
}

}  // namespace

json::object Dispatcher::error_response(const json::value& id, const Error& error,
                                        const Request* request,
                                        const std::shared_ptr<Session>& session,
                                        bool envelope) const {
  if (!envelope) return make_error_response(id, error);
  std::string operation;
  if (request != nullptr) {
    operation = operation_namer_ ? operation_namer_(*request) : request->method;
  }
  const json::object none;
  return make_result_response(
      id, lafs::envelope_for_call(
              lafs_call(id, std::move(operation), request ? request->lafs : none, session),
              Result<json::value>(error)));
}

std::string Dispatcher::to_text(const Reply& reply) {
  if (!reply.body.is_object()) return json::dump(reply.body);
  // Written member by member in one pass (a response is written for every request): the id as
  // the client wrote it (`id_text`, when known) in place of the DOM's, and the kept result text
  // (`raw_result`) in place of the null the body holds for it.
  const json::object& body = reply.body.get_object();
  std::string out;
  out.reserve(64 + reply.id_text.size() + (reply.raw_result ? reply.raw_result->size() : 0));
  out.push_back('{');
  bool first = true;
  for (const auto& member : body) {
    if (!first) out.push_back(',');
    first = false;
    json::serialize_string_to(out, member.key());
    out.push_back(':');
    if (member.key() == "id" && !reply.id_text.empty()) {
      out += reply.id_text;
    } else if (member.key() == "result" && reply.raw_result && member.value().is_null()) {
      out += *reply.raw_result;
    } else {
      json::serialize_to(out, member.value());
    }
  }
  out.push_back('}');
  return out;
}

asio::awaitable<std::optional<Dispatcher::Reply>> Dispatcher::handle_one(
    json::value message, std::shared_ptr<Session> session, CallOptions options,
    Numbers numbers) const {
  // Until the request is read, only the transport can have asked for an envelope.
  const bool env = options.envelope;
  auto anonymous = [&](const Error& error) -> std::optional<Reply> {
    return Reply{json::value(error_response(nullptr, error, nullptr, session, env)), {}, nullptr};
  };
  if (!message.is_object()) {
    co_return anonymous(invalid_request("a request must be a JSON object", ""));
  }
  auto& obj = message.get_object();

  // The id is echoed whenever it could be read, even in an error response (spec section 5).
  const json::value* id_ptr = obj.if_contains("id");
  json::value id = nullptr;
  if (id_ptr != nullptr) {
    if (!valid_id(*id_ptr)) {
      co_return anonymous(invalid_request("'id' must be a string, a number or null", "id"));
    }
    id = *id_ptr;
  }
  // From here on every answer carries the id, exactly as the client wrote it.
  auto reply = [&](json::object response) -> std::optional<Reply> {
    return Reply{json::value(std::move(response)), numbers.id_text, nullptr};
  };
  auto refuse = [&](const Error& error) {
    return reply(error_response(id, error, nullptr, session, env));
  };

  const json::value* version = obj.if_contains("jsonrpc");
  if (version == nullptr || !version->is_string() || version->get_string() != "2.0") {
    co_return refuse(invalid_request("'jsonrpc' must be exactly \"2.0\"", "jsonrpc"));
  }
  const json::value* method_ptr = obj.if_contains("method");
  if (method_ptr == nullptr || !method_ptr->is_string()) {
    co_return refuse(invalid_request("'method' must be a string", "method"));
  }
  json::value params = nullptr;
  if (json::value* p = obj.if_contains("params")) {
    if (!p->is_object() && !p->is_array()) {
      co_return refuse(
          invalid_request("'params' must be an object or an array when present", "params"));
    }
    params = std::move(*p);  // the message is this call's own: its params are not copied
  }
  if (const json::RawNumber* n = numbers.out_of_range) {
    // The DOM holds another number than the client sent: passing it on would change the input.
    if (id_ptr == nullptr) co_return std::nullopt;
    json::object data;
    data["field"] = n->member.empty() ? std::string("params") : n->member;
    data["constraint"] = "number-range";
    data["number"] = n->text.size() > 64 ? n->text.substr(0, 64) + "..." : n->text;
    const std::string what = "the number " + std::string(data["number"].as_string()) +
                             " is beyond what a 64-bit integer or a finite double holds";
    if (n->member == "params") {
      co_return refuse(
          Error::make(ErrorCode::kInvalidParams, "Invalid params: " + what, std::move(data)));
    }
    co_return refuse(
        Error::make(ErrorCode::kInvalidRequest, "Invalid Request: " + what, std::move(data)));
  }

  Request request;
  request.notification = id_ptr == nullptr;
  request.id = id;
  request.method = std::string(method_ptr->get_string());
  request.params = std::move(params);
  request.session = session;
  request.after_reply = options.after_reply;
  // Envelope mode: asked by the transport or by the request (params._lafs); the LAFS members are
  // not the method's, and malformed ones fail the request before the method runs.
  request.envelope = env || lafs::wants_envelope(request.params);
  if (request.envelope) request.lafs = lafs::take_lafs_params(request.params);

  auto it = methods_.find(request.method);
  if (it == methods_.end()) {
    if (request.notification) co_return std::nullopt;
    json::object data;
    data["method"] = request.method;
    co_return reply(
        error_response(id,
                       Error::make(ErrorCode::kMethodNotFound,
                                   "Method not found: " + request.method, std::move(data)),
                       &request, session, request.envelope));
  }
  if (request.envelope) {
    if (auto st = lafs::check_lafs_params(request.lafs); !st.ok()) {
      if (request.notification) co_return std::nullopt;
      co_return reply(error_response(id, st.error(), &request, session, true));
    }
  }

  std::shared_ptr<const std::string> raw_result;
  if (!request.envelope) request.raw_result = &raw_result;
  Result<json::value> result = Error::make(ErrorCode::kInternalError, "Internal error");
  // Timed only for an observer: no clock reads on the hot path of a dispatcher without one.
  const auto started =
      observer_ ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  try {
    result = co_await it->second(request);
  } catch (const std::exception& e) {
    // Methods return errors as values; an exception here is a bug, reported rather than fatal.
    result = Error::make(ErrorCode::kInternalError, std::string("Internal error: ") + e.what());
  }
  if (observer_) {
    observer_(CallRecord{request, result.ok() ? nullptr : &result.error(),
                         std::chrono::steady_clock::now() - started});
  }
  if (request.notification) co_return std::nullopt;
  if (request.envelope) {
    const std::string operation = operation_namer_ ? operation_namer_(request) : request.method;
    co_return reply(make_result_response(
        id, lafs::envelope_for_call(lafs_call(id, operation, request.lafs, session), result)));
  }
  if (!result.ok()) co_return reply(make_error_response(id, result.error()));
  auto answer = reply(make_result_response(id, std::move(result).value()));
  if (raw_result && answer) answer->raw_result = std::move(raw_result);
  co_return answer;
}

asio::awaitable<std::optional<std::vector<Dispatcher::Reply>>> Dispatcher::handle_parsed(
    json::value message, std::shared_ptr<Session> session, CallOptions options,
    const std::vector<json::RawNumber>& raw) const {
  auto numbers_of = [&raw](std::size_t element) {
    Numbers numbers;
    for (const auto& n : raw) {
      if (n.element != element) continue;
      if (n.direct && n.member == "id") numbers.id_text = n.text;
      // An id is echoed as written, whatever its size; elsewhere a changed number is refused.
      if (n.out_of_range && !(n.direct && n.member == "id") && numbers.out_of_range == nullptr) {
        numbers.out_of_range = &n;
      }
    }
    return numbers;
  };
  using Replies = std::optional<std::vector<Reply>>;
  // One reply, moved in: a braced list would copy it, its whole body included.
  auto just = [](Reply one) {
    Replies replies(std::in_place);
    replies->push_back(std::move(one));
    return replies;
  };
  if (!message.is_array()) {
    auto one = co_await handle_one(std::move(message), std::move(session), options,
                                   numbers_of(json::RawNumber::kNoElement));
    if (!one) co_return Replies{};
    co_return just(std::move(*one));
  }

  auto& batch = message.get_array();
  auto whole = [&](const std::string& why) {
    return just(Reply{json::value(error_response(nullptr, invalid_request(why, ""), nullptr,
                                                 session, options.envelope)),
                      {},
                      nullptr});
  };
  if (batch.empty()) co_return whole("an empty batch");
  if (batch.size() > limits_.max_batch) {
    co_return whole("a batch may hold at most " + std::to_string(limits_.max_batch) + " requests");
  }

  // Members run concurrently (one slow handler does not hold up the others); the answers keep
  // the order of the requests.
  auto executor = co_await asio::this_coro::executor;
  using Op = decltype(asio::co_spawn(
      executor, handle_one(json::value(), session, options, Numbers{}), asio::deferred));
  std::vector<Op> ops;
  ops.reserve(batch.size());
  for (std::size_t i = 0; i < batch.size(); ++i) {
    ops.push_back(asio::co_spawn(executor,
                                 handle_one(std::move(batch[i]), session, options, numbers_of(i)),
                                 asio::deferred));
  }
  auto [order, exceptions, results] =
      co_await asio::experimental::make_parallel_group(std::move(ops))
          .async_wait(asio::experimental::wait_for_all(), asio::use_awaitable);

  std::vector<Reply> responses;
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (exceptions[i]) {
      responses.push_back(
          Reply{json::value(make_error_response(
                    nullptr, Error::make(ErrorCode::kInternalError, "Internal error"))),
                {},
                nullptr});
    } else if (results[i]) {
      responses.push_back(std::move(*results[i]));
    }
  }
  if (responses.empty()) co_return Replies{};
  co_return Replies{std::move(responses)};
}

asio::awaitable<std::optional<json::value>> Dispatcher::handle_value(
    json::value message, std::shared_ptr<Session> session, CallOptions options) const {
  const bool batch = is_batch(message);
  auto replies = co_await handle_parsed(std::move(message), std::move(session), options, {});
  if (!replies) co_return std::nullopt;
  // A result kept as text goes back into the value here (this caller wants values).
  for (auto& r : *replies) {
    if (!r.raw_result || !r.body.is_object()) continue;
    auto parsed = json::parse_text(*r.raw_result);
    r.body.get_object()["result"] = parsed.ok() ? std::move(parsed).value() : json::value();
  }
  if (!batch) co_return std::move(replies->front().body);
  json::array out;
  for (auto& r : *replies) out.push_back(std::move(r.body));
  co_return json::value(std::move(out));
}

asio::awaitable<std::optional<std::string>> Dispatcher::handle(std::string_view text,
                                                               std::shared_ptr<Session> session,
                                                               CallOptions options) const {
  std::vector<json::RawNumber> raw;
  auto parsed = json::parse_message(text, json::ParseLimits{.max_depth = limits_.max_depth}, raw);
  if (!parsed.ok()) {
    co_return json::dump(
        error_response(nullptr, parsed.error(), nullptr, session, options.envelope));
  }
  const bool batch = is_batch(*parsed);
  auto replies =
      co_await handle_parsed(std::move(parsed).value(), std::move(session), options, raw);
  if (!replies) co_return std::nullopt;
  if (!batch) co_return to_text(replies->front());
  std::string out = "[";
  for (std::size_t i = 0; i < replies->size(); ++i) {
    if (i > 0) out += ',';
    out += to_text((*replies)[i]);
  }
  out += ']';
  co_return out;
}

}  // namespace hearth::rpc
