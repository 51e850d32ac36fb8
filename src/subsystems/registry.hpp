#pragma once
/// A2S: the vault of the state folder, the registry folders (`--registry`) and the gateway that
/// executes their capabilities, with `registry/*` and `vault/*`.

#include <filesystem>
#include <memory>

#include "a2s/exec/gateway.hpp"
#include "daemon/component.hpp"
#include "daemon/daemon.hpp"
#include "httpclient/client.hpp"
#include "vault/vault.hpp"

namespace hearth::subsystems {

/// The vault of `state_dir` (vault.db), under the master key of $HEARTH_VAULT_KEY or of
/// `state_dir/vault.key` (created, 0600, on first use).
/// `engine`: where its tables are (null: SQLite, `state_dir/vault.db`).
Result<std::shared_ptr<vault::Vault>> open_vault(const std::filesystem::path& state_dir,
                                                 std::shared_ptr<storage::Engine> engine = nullptr);
/// The same vault, its key read and its database opened at first use (a daemon that never needs
/// a variable never loads the key or the cryptography behind it).
std::shared_ptr<vault::Vault> open_vault_on_first_use(
    const std::filesystem::path& state_dir, std::shared_ptr<storage::Engine> engine = nullptr);

class Registry : public daemon::Component {
 public:
  static constexpr std::string_view kName = "registry";
  static std::vector<std::string_view> dependencies() { return {"storage", "audit"}; }
  explicit Registry(daemon::Context& context);

  const std::shared_ptr<a2s::Gateway>& gateway() const { return gateway_; }
  const std::shared_ptr<vault::Vault>& vault() const { return vault_; }

  Status expose(daemon::Surface& surface) override;
  void start() override;
  void describe(boost::json::object& ready) const override;
  void stop() override;

 private:
  bool watch_ = false;
  std::shared_ptr<vault::Vault> vault_;
  std::shared_ptr<httpclient::Client> client_;
  std::shared_ptr<a2s::Gateway> gateway_;
};

}  // namespace hearth::subsystems
