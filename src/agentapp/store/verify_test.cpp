#include "agentapp/store/verify.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "agentapp/store/test_apps.hpp"

namespace hearth::agentapp {
namespace {

using testing::PackageDir;

struct Signer {
  PackageDir trust_dir{"trust"};
  TrustStore trust{trust_dir.path()};
  KeyPair key = generate_key().value();
  Signer() { EXPECT_TRUE(trust.add_key("example-org", key.public_pem).ok()); }
};

AppManifest manifest_of(const PackageDir& dir) {
  auto m = read_manifest(dir.path());
  EXPECT_TRUE(m.ok()) << m.error().message;
  return m.value();
}

TEST(Signature, SignsAndVerifiesAndRefusesAnotherMessageOrKey) {
  const auto key = generate_key().value();
  const auto other = generate_key().value();
  EXPECT_EQ(key.fingerprint.size(), 16u);
  EXPECT_EQ(key_fingerprint(key.public_pem).value(), key.fingerprint);
  EXPECT_EQ(public_key_of(key.private_pem).value(), key.public_pem);
  const auto sig = sign_message(key.private_pem, "message").value();
  EXPECT_EQ(sig.size(), 128u);
  EXPECT_TRUE(verify_message(key.public_pem, "message", sig));
  EXPECT_FALSE(verify_message(key.public_pem, "messagf", sig));
  EXPECT_FALSE(verify_message(other.public_pem, "message", sig));
  EXPECT_FALSE(verify_message(key.public_pem, "message", sig.substr(2) + "00"));
  EXPECT_FALSE(verify_message(key.public_pem, "message", "zz"));
  EXPECT_FALSE(key_fingerprint("not a key").ok());
}

TEST(Verify, AnUnsignedPackageIsReportedAsSuch) {
  PackageDir dir("notes");
  testing::write_notes_app(dir);
  Signer s;
  const auto v = verify_package(dir.path(), manifest_of(dir), s.trust);
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v.value().trust, Trust::kUnsigned);
  EXPECT_EQ(v.value().package_hash.rfind("sha256:", 0), 0u);
}

TEST(Verify, ASignedPackageVerifiesWithItsPublishersKey) {
  PackageDir dir("notes");
  testing::write_notes_app(dir);
  Signer s;
  const auto fp = sign_package(dir.path(), s.key.private_pem, "example-org");
  ASSERT_TRUE(fp.ok()) << fp.error().message;
  EXPECT_EQ(fp.value(), s.key.fingerprint);
  const auto v = verify_package(dir.path(), manifest_of(dir), s.trust);
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v.value().trust, Trust::kSigned);
  EXPECT_EQ(v.value().publisher_id, "example-org");
  EXPECT_EQ(v.value().key, s.key.fingerprint);
}

TEST(Verify, AnyFileChangedAfterSigningIsRefused) {
  Signer s;
  for (const std::string changed : {"services/backend.py", "APP.md", "new-file.txt"}) {
    PackageDir dir("notes");
    testing::write_notes_app(dir);
    ASSERT_TRUE(sign_package(dir.path(), s.key.private_pem, "example-org").ok());
    dir.write(changed, changed == "APP.md" ? testing::notes_app_md() + "\nmore\n" : "changed\n");
    const auto v = verify_package(dir.path(), manifest_of(dir), s.trust);
    ASSERT_FALSE(v.ok()) << changed;
    EXPECT_NE(v.error().message.find("not the one"), std::string::npos) << v.error().message;
  }
}

TEST(Verify, ARevokedKeyOrPackageIsRefused) {
  PackageDir dir("notes");
  testing::write_notes_app(dir);
  Signer s;
  ASSERT_TRUE(sign_package(dir.path(), s.key.private_pem, "example-org").ok());
  const auto first = verify_package(dir.path(), manifest_of(dir), s.trust);
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(s.trust.revoke("package", first.value().package_hash).ok());
  auto v = verify_package(dir.path(), manifest_of(dir), s.trust);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.error().message.find("revocation list"), std::string::npos);

  Signer fresh;
  ASSERT_TRUE(sign_package(dir.path(), fresh.key.private_pem, "example-org").ok());
  ASSERT_TRUE(verify_package(dir.path(), manifest_of(dir), fresh.trust).ok());
  ASSERT_TRUE(fresh.trust.revoke("key", fresh.key.fingerprint).ok());
  v = verify_package(dir.path(), manifest_of(dir), fresh.trust);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.error().message.find("revoked"), std::string::npos);
}

TEST(Verify, AnUntrustedKeyOrAnotherPublisherIsRefused) {
  PackageDir dir("notes");
  testing::write_notes_app(dir);
  Signer s;
  const auto stranger = generate_key().value();
  ASSERT_TRUE(sign_package(dir.path(), stranger.private_pem, "example-org").ok());
  auto v = verify_package(dir.path(), manifest_of(dir), s.trust);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.error().message.find("untrusted"), std::string::npos);
  // Signing for a publisher the manifest does not name is refused at signing.
  EXPECT_FALSE(sign_package(dir.path(), s.key.private_pem, "someone-else").ok());
}

TEST(Verify, APlaceholderSignatureIsAZeroHashPackage) {
  PackageDir dir("notes");
  testing::write_notes_app(dir);
  dir.write("app.signature.yaml",
            "signature:\n  package:\n    algorithm: sha256\n    hash: " + std::string(64, '0') +
                "\n  manifest:\n    algorithm: sha256\n    hash: " + std::string(64, '0') + "\n");
  Signer s;
  const auto v = verify_package(dir.path(), manifest_of(dir), s.trust);
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v.value().trust, Trust::kZeroHash);
}

TEST(Verify, AForgedSignatureIsRefused) {
  PackageDir dir("notes");
  testing::write_notes_app(dir);
  Signer s;
  ASSERT_TRUE(sign_package(dir.path(), s.key.private_pem, "example-org").ok());
  auto text = std::string();
  {
    std::ifstream in(dir.path() / "app.signature.yaml");
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const auto at = text.find("signature: \"") + 12;
  text[at] = text[at] == 'a' ? 'b' : 'a';
  dir.write("app.signature.yaml", text);
  const auto v = verify_package(dir.path(), manifest_of(dir), s.trust);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.error().message.find("does not verify"), std::string::npos) << v.error().message;
}

TEST(NativeProjection, ReadsRealYamlAndKeepsEverySectionInTheSchemasShape) {
  PackageDir dir("p");
  dir.write("APP.md",
            "---\nname: p\ndescription: |\n  Two lines\n  of text.\nversion: \"1.0\"\n"
            "status: draft\nappType: custom\nentries:\n- key: a\n  kind: page\n  title: A\n"
            "- just text\nintegrations: {integrations: []}\n---\n");
  dir.write("app.operations.yaml", "operations:\n  - {key: op, type: t, sideEffect: none}\n");
  const auto m = read_manifest(dir.path());
  ASSERT_TRUE(m.ok()) << m.error().message;
  Verified v;
  v.package_hash = "sha256:" + std::string(64, '1');
  v.manifest_hash = "sha256:" + std::string(64, '2');
  const auto p = project_native(m.value(), dir.path(), v);
  EXPECT_EQ(p.at("app").at("description"), "Two lines\nof text.\n");
  EXPECT_EQ(p.at("app").at("version"), "1.0");
  // A list written at its key's indentation is a list; an item that is not a map is left out.
  ASSERT_EQ(p.at("entries").as_array().size(), 1u);
  EXPECT_EQ(p.at("entries").at(0).at("provenance").at("packageHash"), json::value(v.package_hash));
  // A section of the wrong shape in the front matter gives way to the layered file, or empty.
  EXPECT_EQ(json::serialize(p.at("integrations")), "[]");
  EXPECT_EQ(p.at("operations").at(0).at("key"), "op");
}

TEST(NativeManifest, ListsEveryProblem) {
  PackageDir dir("bad");
  dir.write("APP.md", "---\nname: Bad Name\nversion: 1\nstatus: live\n---\n");
  const auto m = read_manifest(dir.path());
  ASSERT_FALSE(m.ok());
  const auto& msg = m.error().message;
  for (const char* part :
       {"/description: required", "/appType: required", "/version: must be a non-empty string",
        "not a valid app name", "/status: 'live'"}) {
    EXPECT_NE(msg.find(part), std::string::npos) << part << " in " << msg;
  }
  dir.write("APP.md",
            "\xEF\xBB\xBF---\r\nname: ok\r\ndescription: d\r\nversion: \"1\"\r\n"
            "status: draft\r\nappType: custom\r\n---\r\n");
  EXPECT_TRUE(read_manifest(dir.path()).ok());
}

}  // namespace
}  // namespace hearth::agentapp
