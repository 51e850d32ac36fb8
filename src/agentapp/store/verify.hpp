#pragma once
/// Verifying a staged package before anything of it is used (docs/agent-apps.md,
/// "Signatures"), and signing one: in the format's order, the package and manifest hashes, the
/// signature, the revocation list, then the publisher.

#include <filesystem>
#include <string>

#include "agentapp/store/native.hpp"
#include "agentapp/store/signature.hpp"
#include "common/result.hpp"

namespace hearth::agentapp {

enum class Trust {
  kSigned,    ///< a trusted publisher key signed exactly these files
  kUnsigned,  ///< no app.signature.yaml: installs only with --dev
  kZeroHash,  ///< a placeholder signature file (hashes of zeros): installs only with --dev
};
std::string_view to_string(Trust trust);

struct Verified {
  Trust trust = Trust::kUnsigned;
  std::string package_hash;   ///< "sha256:..." over the files without app.signature.yaml
  std::string manifest_hash;  ///< "sha256:..." of APP.md
  std::string publisher_id;   ///< the signer (kSigned only)
  std::string key;            ///< the signing key's fingerprint (kSigned only)
};

/// Verifies the package at `root`. A signature that is present and wrong in any way (files
/// changed after signing, an unknown or revoked key, another publisher, a bad signature) and a
/// revoked package hash are errors, whatever `--dev` says.
Result<Verified> verify_package(const std::filesystem::path& root, const AppManifest& manifest,
                                const TrustStore& trust);

/// hearth's own projection of an installed package (docs/agent-apps.md, "Projection"): the
/// shape of the reference CLI's `project`, but read with a real YAML parser, a layered file
/// read only when the front matter lacks its section, and every section valid against the
/// format's projection schema (an item that is not a map is left out, not spread). The
/// provenance is the verified package's.
json::object project_native(const AppManifest& manifest, const std::filesystem::path& package,
                            const Verified& verified);

/// Writes `<root>/app.signature.yaml` signed with `private_pem` for `publisher_id` (which must
/// match the manifest's publisher.publisherId when it has one). Returns the key's fingerprint.
Result<std::string> sign_package(const std::filesystem::path& root, std::string_view private_pem,
                                 std::string_view publisher_id);

}  // namespace hearth::agentapp
