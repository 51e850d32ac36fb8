#include "a2s/exec/scrub.hpp"

#include <algorithm>

#include "common/base64.hpp"
#include "httpclient/url.hpp"

namespace hearth::a2s {
namespace {

std::string json_escaped(std::string_view text) {
  // The text between the quotes of the value's JSON string form.
  std::string quoted = json::serialize(json::string(text));
  return quoted.substr(1, quoted.size() - 2);
}

std::string form_encoded(std::string_view text) {
  std::string out = httpclient::encode_component(text);
  std::string spaced;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out.compare(i, 3, "%20") == 0) {
      spaced += '+';
      i += 2;
    } else {
      spaced += out[i];
    }
  }
  return spaced;
}

}  // namespace

void Scrubber::add(std::string_view secret, std::string_view name) {
  if (secret.size() < kMinLength) return;
  const std::string replacement = "[redacted:" + std::string(name) + "]";
  std::vector<std::string> forms = {std::string(secret), httpclient::encode_component(secret),
                                    form_encoded(secret), json_escaped(secret),
                                    base64_encode(secret)};
  for (auto& form : forms) {
    if (form.size() < kMinLength) continue;
    const bool known = std::any_of(needles_.begin(), needles_.end(),
                                   [&](const Needle& n) { return n.text == form; });
    if (!known) needles_.push_back({std::move(form), replacement});
  }
  std::stable_sort(needles_.begin(), needles_.end(),
                   [](const Needle& a, const Needle& b) { return a.text.size() > b.text.size(); });
}

std::string Scrubber::apply(std::string_view text) const {
  std::string out(text);
  for (const auto& needle : needles_) {
    std::size_t pos = 0;
    while ((pos = out.find(needle.text, pos)) != std::string::npos) {
      out.replace(pos, needle.text.size(), needle.replacement);
      pos += needle.replacement.size();
    }
  }
  return out;
}

json::value Scrubber::apply_json(const json::value& value) const {
  if (needles_.empty()) return value;
  switch (value.kind()) {
    case json::kind::string:
      return json::string(apply(std::string_view(value.get_string())));
    case json::kind::array: {
      json::array out;
      out.reserve(value.get_array().size());
      for (const auto& item : value.get_array()) out.push_back(apply_json(item));
      return out;
    }
    case json::kind::object: {
      json::object out;
      for (const auto& [key, item] : value.get_object()) {
        out[apply(std::string_view(key))] = apply_json(item);
      }
      return out;
    }
    default:
      return value;
  }
}

}  // namespace hearth::a2s
