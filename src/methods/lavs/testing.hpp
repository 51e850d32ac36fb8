#pragma once
// Test fixture for the lavs/* methods: a host loaded from service folders, its methods on the
// harness's dispatcher, and everything it started stopped afterwards.

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <vector>

#include "host/host.hpp"
#include "methods/lavs/lavs.hpp"
#include "methods/testing.hpp"
#include "proc/process.hpp"

namespace hearth::methods::lavs {

class LavsTest : public ::testing::Test, public methods::testing::Harness {
 protected:
  /// Loads the services under `paths` and registers the lavs/* methods over them. Call it with
  /// ASSERT_NO_FATAL_FAILURE: a load problem fails the test, naming the first problem.
  void serve(const std::vector<std::filesystem::path>& paths) {
    host::LoadReport report;
    host_ = host::Host::load(paths, {}, ioc().get_executor(), report);
    ASSERT_TRUE(host_) << (report.failures.empty() ? ""
                                                   : report.failures[0].problems[0].to_string());
    add_methods(dispatcher(), *host_);
  }
  void TearDown() override {
    if (host_) host_->shutdown();
    proc::kill_all();
  }

  std::unique_ptr<host::Host> host_;
};

}  // namespace hearth::methods::lavs
