#include "lafs/flags.hpp"

#include "common/ascii.hpp"
#include "lafs/envelope.hpp"

namespace hearth::lafs {

namespace {

Error bad_flag(std::string_view field, std::string why) {
  return make_error(kValidationSchema, std::string(field) + ": " + why,
                    json::object{{"field", field}});
}

}  // namespace

std::string_view to_string(Format f) {
  return f == Format::kJson ? "json" : "human";
}

std::string_view to_string(FlagResolution::Source s) {
  switch (s) {
    case FlagResolution::Source::kFlag:
      return "flag";
    case FlagResolution::Source::kProject:
      return "project";
    case FlagResolution::Source::kUser:
      return "user";
    case FlagResolution::Source::kDefault:
      return "default";
  }
  return "default";
}

Result<FlagInput> parse_flag_input(const json::value& doc) {
  if (!doc.is_object()) return bad_flag("flags", "must be an object");
  FlagInput in;
  for (const auto& kv : doc.get_object()) {
    const std::string_view key = kv.key();
    const json::value& v = kv.value();
    auto boolean = [&](bool& slot) -> Status {
      if (!v.is_bool()) return bad_flag(key, "must be a boolean");
      slot = v.get_bool();
      return {};
    };
    auto format = [&](std::optional<Format>& slot) -> Status {
      if (v.is_null()) return {};
      if (!v.is_string() || (v.get_string() != "json" && v.get_string() != "human")) {
        return bad_flag(key, "must be \"json\" or \"human\"");
      }
      slot = v.get_string() == "json" ? Format::kJson : Format::kHuman;
      return {};
    };
    if (key == "jsonFlag") {
      HEARTH_RETURN_IF_ERROR(boolean(in.json_flag));
    } else if (key == "humanFlag") {
      HEARTH_RETURN_IF_ERROR(boolean(in.human_flag));
    } else if (key == "quiet") {
      HEARTH_RETURN_IF_ERROR(boolean(in.quiet));
    } else if (key == "requestedFormat") {
      HEARTH_RETURN_IF_ERROR(format(in.requested_format));
    } else if (key == "projectDefault") {
      HEARTH_RETURN_IF_ERROR(format(in.project_default));
    } else if (key == "userDefault") {
      HEARTH_RETURN_IF_ERROR(format(in.user_default));
    }
    // Other members (tty, ...) do not change the format: the protocol default is json.
  }
  return in;
}

Result<FlagResolution> resolve_format(const FlagInput& in) {
  if (in.human_flag && in.json_flag) {
    return make_error(kFormatConflict, "Cannot combine --human and --json in the same invocation",
                      json::object{{"flags", json::array{"--human", "--json"}}});
  }
  FlagResolution r;
  r.quiet = in.quiet;
  if (in.requested_format) {
    r.format = *in.requested_format;
    r.source = FlagResolution::Source::kFlag;
  } else if (in.human_flag) {
    r.format = Format::kHuman;
    r.source = FlagResolution::Source::kFlag;
  } else if (in.json_flag) {
    r.format = Format::kJson;
    r.source = FlagResolution::Source::kFlag;
  } else if (in.project_default) {
    r.format = *in.project_default;
    r.source = FlagResolution::Source::kProject;
  } else if (in.user_default) {
    r.format = *in.user_default;
    r.source = FlagResolution::Source::kUser;
  }
  return r;
}

Result<FieldSelection> resolve_field_flags(const std::optional<std::string>& field,
                                           const std::optional<std::string>& fields) {
  if (field && fields) {
    return make_error(
        kFieldConflict,
        "Cannot combine --field and --fields: --field extracts one value as plain text, "
        "--fields filters the envelope",
        json::object{
            {"conflictingModes", json::array{"single-field-extraction", "multi-field-filter"}}});
  }
  FieldSelection sel;
  sel.field = field;
  if (fields) {
    std::size_t start = 0;
    while (start <= fields->size()) {
      const std::size_t comma = fields->find(',', start);
      std::string part(ascii::trim(std::string_view(*fields).substr(
          start, comma == std::string::npos ? std::string::npos : comma - start)));
      if (!part.empty()) sel.fields.push_back(std::move(part));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return sel;
}

}  // namespace hearth::lafs
