#pragma once
/// A JSON-RPC connection as a subscriber of the host: what the host tells it becomes the LAVS
/// notifications of lavs-spec-v1 5.4 (`lavs/data`, `lavs/subscriptionEnded`), pushed to the
/// connection. lavs/subscribe and view/subscribe subscribe through it.

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "host/subscriber.hpp"
#include "rpc/session.hpp"

namespace hearth::methods::lavs {

/// The subscriber that pushes to `session` while it is open (it holds the session weakly, as the
/// host holds the subscriber until the session closes). Its id is the session's.
std::shared_ptr<host::Subscriber> session_subscriber(const std::shared_ptr<rpc::Session>& session);

/// The `lavs/data` notification of an item, from its JSON text (a push to many subscribers
/// serialises the item once and splices each id in).
std::string data_notification(const std::string& subscription_id, std::string_view data_text);

/// The `lavs/subscriptionEnded` notification.
std::string ended_notification(const std::string& subscription_id, std::string_view reason,
                               const std::optional<Error>& error);

}  // namespace hearth::methods::lavs
