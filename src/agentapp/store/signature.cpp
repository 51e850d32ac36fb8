#include "agentapp/store/signature.hpp"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <fstream>
#include <memory>
#include <sstream>

#include "common/atomic_file.hpp"
#include "common/sha256.hpp"

namespace hearth::agentapp {

namespace {

struct PkeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
struct CtxFree {
  void operator()(EVP_PKEY_CTX* c) const { EVP_PKEY_CTX_free(c); }
};
struct MdCtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
using Pkey = std::unique_ptr<EVP_PKEY, PkeyFree>;

Error crypto_error(std::string message) {
  return Error::make(ErrorCode::kInvalidParams, std::move(message));
}

std::string bio_text(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<std::size_t>(n));
}

Result<Pkey> read_public(std::string_view pem) {
  std::unique_ptr<BIO, BioFree> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  Pkey key(PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr));
  if (!key || EVP_PKEY_id(key.get()) != EVP_PKEY_ED25519) {
    return crypto_error("not an Ed25519 public key in PEM form");
  }
  return key;
}

Result<Pkey> read_private(std::string_view pem) {
  std::unique_ptr<BIO, BioFree> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  Pkey key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (!key || EVP_PKEY_id(key.get()) != EVP_PKEY_ED25519) {
    return crypto_error("not an Ed25519 private key in PEM form");
  }
  return key;
}

bool unhex(std::string_view text, std::string& out) {
  if (text.size() % 2 != 0) return false;
  const auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  out.clear();
  for (std::size_t i = 0; i < text.size(); i += 2) {
    const int hi = nibble(text[i]);
    const int lo = nibble(text[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out += static_cast<char>(hi * 16 + lo);
  }
  return true;
}

Result<std::string> fingerprint_of(EVP_PKEY* key) {
  unsigned char raw[32];
  std::size_t len = sizeof raw;
  if (EVP_PKEY_get_raw_public_key(key, raw, &len) != 1 || len != sizeof raw) {
    return crypto_error("cannot read the raw public key");
  }
  return sha256_hex(std::string_view(reinterpret_cast<const char*>(raw), len)).substr(0, 16);
}

Result<std::string> public_pem_of(EVP_PKEY* key) {
  std::unique_ptr<BIO, BioFree> bio(BIO_new(BIO_s_mem()));
  if (PEM_write_bio_PUBKEY(bio.get(), key) != 1) return crypto_error("cannot write the public key");
  return bio_text(bio.get());
}

std::string read_whole(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace

bool valid_publisher_id(std::string_view id) {
  if (id.empty() || id.size() > 64) return false;
  const auto ok = [](char c, bool first) {
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) return true;
    return !first && (c == '-' || c == '_' || c == '.');
  };
  for (std::size_t i = 0; i < id.size(); ++i) {
    if (!ok(id[i], i == 0)) return false;
  }
  return true;
}

Result<KeyPair> generate_key() {
  std::unique_ptr<EVP_PKEY_CTX, CtxFree> ctx(EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, nullptr));
  EVP_PKEY* raw = nullptr;
  if (!ctx || EVP_PKEY_keygen_init(ctx.get()) != 1 || EVP_PKEY_keygen(ctx.get(), &raw) != 1) {
    return crypto_error("Ed25519 key generation failed");
  }
  Pkey key(raw);
  KeyPair pair;
  std::unique_ptr<BIO, BioFree> bio(BIO_new(BIO_s_mem()));
  if (PEM_write_bio_PrivateKey(bio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return crypto_error("cannot write the private key");
  }
  pair.private_pem = bio_text(bio.get());
  HEARTH_ASSIGN_OR_RETURN(pair.public_pem, public_pem_of(key.get()));
  HEARTH_ASSIGN_OR_RETURN(pair.fingerprint, fingerprint_of(key.get()));
  return pair;
}

Result<std::string> key_fingerprint(std::string_view public_pem) {
  HEARTH_ASSIGN_OR_RETURN(auto key, read_public(public_pem));
  return fingerprint_of(key.get());
}

Result<std::string> public_key_of(std::string_view private_pem) {
  HEARTH_ASSIGN_OR_RETURN(auto key, read_private(private_pem));
  return public_pem_of(key.get());
}

Result<std::string> sign_message(std::string_view private_pem, std::string_view message) {
  HEARTH_ASSIGN_OR_RETURN(auto key, read_private(private_pem));
  std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
  unsigned char sig[64];
  std::size_t len = sizeof sig;
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, key.get()) != 1 ||
      EVP_DigestSign(ctx.get(), sig, &len, reinterpret_cast<const unsigned char*>(message.data()),
                     message.size()) != 1) {
    return crypto_error("Ed25519 signing failed");
  }
  return to_hex(std::string_view(reinterpret_cast<const char*>(sig), len));
}

bool verify_message(std::string_view public_pem, std::string_view message,
                    std::string_view signature_hex) {
  auto key = read_public(public_pem);
  std::string sig;
  if (!key.ok() || !unhex(signature_hex, sig) || sig.size() != 64) return false;
  std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
  return ctx &&
         EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, key.value().get()) == 1 &&
         EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(sig.data()), sig.size(),
                          reinterpret_cast<const unsigned char*>(message.data()),
                          message.size()) == 1;
}

std::string signed_message(const SignedFacts& facts) {
  std::string out = "hearth-agentapp-signature-v1\n";
  for (const auto* part : {&facts.name, &facts.version, &facts.publisher_id, &facts.package_digest,
                           &facts.manifest_digest}) {
    out += *part;
    out += '\n';
  }
  return out;
}

Result<std::string> TrustStore::key_of(std::string_view publisher_id,
                                       std::string_view fingerprint) const {
  if (!valid_publisher_id(publisher_id)) {
    return crypto_error("invalid publisher id '" + std::string(publisher_id) + "'");
  }
  const auto folder = dir_ / std::string(publisher_id);
  std::error_code ec;
  if (!std::filesystem::is_directory(folder, ec)) {
    return crypto_error("no trusted keys for publisher '" + std::string(publisher_id) + "' in " +
                        dir_.string());
  }
  for (const auto& entry : std::filesystem::directory_iterator(folder, ec)) {
    if (entry.path().extension() != ".pem" || !entry.is_regular_file(ec)) continue;
    std::string pem = read_whole(entry.path());
    auto fp = key_fingerprint(pem);
    if (fp.ok() && fp.value() == fingerprint) return pem;
  }
  return crypto_error("publisher '" + std::string(publisher_id) + "' has no trusted key " +
                      std::string(fingerprint));
}

std::vector<std::string> TrustStore::revoked_lines() const {
  std::vector<std::string> out;
  std::ifstream in(dir_ / "revoked");
  for (std::string line; std::getline(in, line);) {
    if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) {
      line.pop_back();
    }
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

bool TrustStore::key_revoked(std::string_view fingerprint) const {
  const std::string want = "key " + std::string(fingerprint);
  for (const auto& line : revoked_lines()) {
    if (line == want) return true;
  }
  return false;
}

bool TrustStore::package_revoked(std::string_view package_hash) const {
  const std::string want = "package " + std::string(package_hash);
  for (const auto& line : revoked_lines()) {
    if (line == want) return true;
  }
  return false;
}

Result<std::string> TrustStore::add_key(std::string_view publisher_id,
                                        std::string_view public_pem) {
  if (!valid_publisher_id(publisher_id)) {
    return crypto_error("invalid publisher id '" + std::string(publisher_id) +
                        "' (lowercase letters, digits, '-', '_', '.'; 1-64)");
  }
  HEARTH_ASSIGN_OR_RETURN(auto fingerprint, key_fingerprint(public_pem));
  const auto folder = dir_ / std::string(publisher_id);
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  if (ec) return crypto_error("cannot create " + folder.string() + ": " + ec.message());
  auto written = write_file_atomic(folder / (fingerprint + ".pem"), public_pem,
                                   AtomicWriteOptions{.mode = 0644});
  if (!written.ok()) return std::move(written).error();
  return fingerprint;
}

Status TrustStore::revoke(std::string_view kind, std::string_view what) {
  if (kind != "key" && kind != "package") {
    return crypto_error("revoke a 'key' (fingerprint) or a 'package' (sha256:...)");
  }
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  std::string text;
  {
    std::ifstream in(dir_ / "revoked", std::ios::binary);
    std::ostringstream all;
    all << in.rdbuf();
    text = all.str();
  }
  if (!text.empty() && text.back() != '\n') text += '\n';
  text += std::string(kind) + " " + std::string(what) + "\n";
  return write_file_atomic(dir_ / "revoked", text, AtomicWriteOptions{.mode = 0644});
}

}  // namespace hearth::agentapp
