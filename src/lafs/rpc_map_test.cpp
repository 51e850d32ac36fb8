#include "lafs/rpc_map.hpp"

#include <gtest/gtest.h>

#include "lafs/conformance.hpp"

namespace hearth::lafs {
namespace {

TEST(LafsRpcMap, EveryHearthCodeMapsToARegisteredCode) {
  for (auto code : {ErrorCode::kParseError, ErrorCode::kInvalidRequest, ErrorCode::kMethodNotFound,
                    ErrorCode::kInvalidParams, ErrorCode::kInternalError,
                    ErrorCode::kPermissionDenied, ErrorCode::kTimeout, ErrorCode::kHandlerError}) {
    ErrorInfo e = to_lafs_error(Error::make(code, ""));
    EXPECT_NE(find_code(e.code), nullptr) << static_cast<int>(code);
    EXPECT_EQ(e.details.at("jsonrpcCode"), static_cast<int>(code));
    EXPECT_FALSE(e.message.empty());
    // An envelope of it passes the standard tier on every transport.
    for (auto t : {Transport::kHttp, Transport::kCli, Transport::kGrpc, Transport::kSdk}) {
      auto env = Builder("svc.op").request_id("req_1").transport(t).failure(e);
      ASSERT_TRUE(env.ok());
      EXPECT_TRUE(run_envelope_conformance(env.value(), Tier::kStandard).ok);
    }
  }
}

TEST(LafsRpcMap, Table) {
  EXPECT_EQ(to_lafs_error(Error::make(ErrorCode::kParseError, "x")).code, kValidationSchema);
  EXPECT_EQ(to_lafs_error(Error::make(ErrorCode::kInvalidRequest, "x")).code, kValidationSchema);
  EXPECT_EQ(to_lafs_error(Error::make(ErrorCode::kMethodNotFound, "x")).code, kNotFoundResource);
  EXPECT_EQ(to_lafs_error(Error::make(ErrorCode::kInvalidParams, "x")).code, kValidationSchema);
  EXPECT_EQ(to_lafs_error(Error::make(ErrorCode::kInternalError, "x")).code, kInternalUnexpected);
  EXPECT_EQ(to_lafs_error(Error::make(ErrorCode::kTimeout, "x")).code, kTransientUpstream);
  EXPECT_TRUE(to_lafs_error(Error::make(ErrorCode::kTimeout, "x")).retryable);
  EXPECT_EQ(to_lafs_error(Error::make(ErrorCode::kHandlerError, "x")).code, kInternalUnexpected);
  auto path = to_lafs_error(
      Error::make(ErrorCode::kPermissionDenied, "no", json::object{{"path", "../x"}}));
  EXPECT_EQ(path.code, kNotFoundResource);
  EXPECT_EQ(path.details.at("path"), "../x");
  auto jail = to_lafs_error(
      Error::make(ErrorCode::kPermissionDenied, "no", json::object{{"mechanism", "landlock"}}));
  EXPECT_EQ(jail.code, kInternalUnexpected);
  EXPECT_EQ(jail.escalation_required, true);
  EXPECT_EQ(rpc_mappings().size(), 10u);
}

TEST(LafsRpcMap, ExplicitLafsCodeWins) {
  Error e = make_error(kDisclosureUnknownField, "unknown", json::object{{"field", "comments"}});
  EXPECT_EQ(e.code, ErrorCode::kInvalidParams);
  ErrorInfo info = to_lafs_error(e);
  EXPECT_EQ(info.code, kDisclosureUnknownField);
  EXPECT_EQ(info.category, Category::kValidation);
  EXPECT_EQ(info.details.at("field"), "comments");
  EXPECT_EQ(info.message, "unknown");
  EXPECT_EQ(jsonrpc_code_for(kInternalUnexpected), ErrorCode::kInternalError);
  EXPECT_EQ(jsonrpc_code_for("E_NOT_REGISTERED"), ErrorCode::kInternalError);
}

}  // namespace
}  // namespace hearth::lafs
