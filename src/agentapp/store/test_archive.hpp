#pragma once
// Test helper: writes .tar.gz archives entry by entry, including the entries a package must
// never contain (links, devices, names that leave the folder).

#include <archive.h>
#include <archive_entry.h>

#include <filesystem>
#include <string>

namespace hearth::agentapp::testing {

class TarGz {
 public:
  explicit TarGz(const std::filesystem::path& file) : a_(archive_write_new()) {
    archive_write_add_filter_gzip(a_);
    archive_write_set_format_pax_restricted(a_);
    archive_write_open_filename(a_, file.c_str());
  }
  ~TarGz() { close(); }
  TarGz(const TarGz&) = delete;
  TarGz& operator=(const TarGz&) = delete;

  TarGz& file(const std::string& name, const std::string& bytes) {
    return entry(name, AE_IFREG, bytes, "", "");
  }
  TarGz& folder(const std::string& name) { return entry(name, AE_IFDIR, "", "", ""); }
  TarGz& symlink(const std::string& name, const std::string& target) {
    return entry(name, AE_IFLNK, "", target, "");
  }
  TarGz& hardlink(const std::string& name, const std::string& target) {
    return entry(name, AE_IFREG, "", "", target);
  }
  TarGz& device(const std::string& name) { return entry(name, AE_IFCHR, "", "", ""); }
  void close() {
    if (a_ == nullptr) return;
    archive_write_close(a_);
    archive_write_free(a_);
    a_ = nullptr;
  }

 private:
  TarGz& entry(const std::string& name, unsigned type, const std::string& bytes,
               const std::string& symlink, const std::string& hardlink) {
    archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, name.c_str());
    archive_entry_set_filetype(e, type);
    archive_entry_set_perm(e, type == AE_IFDIR ? 0755 : 0644);
    archive_entry_set_size(e, static_cast<la_int64_t>(bytes.size()));
    if (!symlink.empty()) archive_entry_set_symlink(e, symlink.c_str());
    if (!hardlink.empty()) archive_entry_set_hardlink(e, hardlink.c_str());
    archive_write_header(a_, e);
    if (!bytes.empty()) archive_write_data(a_, bytes.data(), bytes.size());
    archive_entry_free(e);
    return *this;
  }
  archive* a_;
};

}  // namespace hearth::agentapp::testing
