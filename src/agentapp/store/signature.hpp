#pragma once
/// hearth's package signatures (docs/agent-apps.md, "Signatures"): Ed25519 over the package's
/// digests, the publishers' public keys in a trust folder, a local revocation list. OpenSSL does
/// the cryptography.

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"

namespace hearth::agentapp {

struct KeyPair {
  std::string private_pem;  ///< PKCS#8
  std::string public_pem;   ///< SubjectPublicKeyInfo
  std::string fingerprint;  ///< key_fingerprint(public_pem)
};

/// A new Ed25519 key pair.
Result<KeyPair> generate_key();

/// The first 16 hex digits of SHA-256 over the raw 32-byte public key; names a key in
/// signatures and in the revocation list.
Result<std::string> key_fingerprint(std::string_view public_pem);
/// The public key of a private key, as PEM.
Result<std::string> public_key_of(std::string_view private_pem);

/// Signs `message`; the signature as lowercase hex (128 digits).
Result<std::string> sign_message(std::string_view private_pem, std::string_view message);
/// True when `signature_hex` is `public_pem`'s signature of `message`.
bool verify_message(std::string_view public_pem, std::string_view message,
                    std::string_view signature_hex);

/// What a signature covers: the package's identity and its two digests (lowercase hex, no
/// "sha256:" prefix).
struct SignedFacts {
  std::string name;
  std::string version;
  std::string publisher_id;
  std::string package_digest;   ///< the package hash of the tree without app.signature.yaml
  std::string manifest_digest;  ///< SHA-256 of APP.md
};
/// The exact bytes signed: "hearth-agentapp-signature-v1\n" then each fact and "\n".
std::string signed_message(const SignedFacts& facts);

/// The trust folder: `<dir>/<publisherId>/*.pem` public keys, and `<dir>/revoked` (one
/// `key <fingerprint>` or `package sha256:<hex>` per line; `#` comments).
class TrustStore {
 public:
  explicit TrustStore(std::filesystem::path dir) : dir_(std::move(dir)) {}

  /// The PEM of `publisher_id`'s key with this fingerprint, or an error naming what is missing.
  Result<std::string> key_of(std::string_view publisher_id, std::string_view fingerprint) const;
  bool key_revoked(std::string_view fingerprint) const;
  bool package_revoked(std::string_view package_hash) const;

  /// Adds a public key for a publisher (copied into the folder); returns its fingerprint.
  Result<std::string> add_key(std::string_view publisher_id, std::string_view public_pem);
  /// Appends `key <fingerprint>` or `package sha256:<hex>` to the revocation list.
  Status revoke(std::string_view kind, std::string_view what);

  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::vector<std::string> revoked_lines() const;
  std::filesystem::path dir_;
};

/// A publisher id as the format allows it (`^[a-z0-9][a-z0-9-_.]*$`, 1-64): also a folder name.
bool valid_publisher_id(std::string_view id);

}  // namespace hearth::agentapp
