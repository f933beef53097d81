#include "config/params.h"

#include <stdexcept>

namespace vtoe::config {

Key to_key(const core::ParamSpec& s) {
  using core::ParamKind;
  Key k;
  switch (s.kind) {
    case ParamKind::Uint:
      k = Key::uint(s.path, s.default_text, s.meaning);
      break;
    case ParamKind::Real:
      k = Key::real(s.path, s.default_text, s.meaning);
      break;
    case ParamKind::Ratio:
      k = Key::ratio(s.path, s.default_text, s.meaning);
      break;
    case ParamKind::Bool:
      k = Key::boolean(s.path, s.default_text, s.meaning);
      break;
    case ParamKind::String:
      k = Key::string(s.path, s.default_text, s.meaning);
      break;
    case ParamKind::Enum:
      k = Key::enumeration(s.path, s.choices, s.default_text, s.meaning);
      break;
    case ParamKind::Time:
      k = Key::time(s.path, s.default_text, s.meaning);
      break;
    case ParamKind::Frequency:
      k = Key::frequency(s.path, s.default_text, s.meaning);
      break;
    case ParamKind::Bandwidth:
      k = Key::bandwidth(s.path, s.default_text, s.meaning);
      break;
    case ParamKind::Bytes:
      k = Key::bytes(s.path, s.default_text, s.meaning);
      break;
  }
  if (!s.min_text.empty()) {
    k.min_text = s.min_text;
    k.min_exclusive = s.min_exclusive;
  }
  if (!s.max_text.empty()) k.max_text = s.max_text;
  if (s.check) {
    k.check = [check = s.check](const Value& v) {
      try {
        check(v);
      } catch (const ValueError&) {
        throw;
      } catch (const std::invalid_argument& e) {
        throw ValueError(e.what());
      }
    };
    k.check_doc = s.check_doc;
  }
  return k;
}

std::string item_path(const std::string& pattern, std::size_t index) {
  const auto brackets = pattern.find("[]");
  if (brackets == std::string::npos)
    throw std::logic_error("'" + pattern + "' is not the key of a list item");
  return pattern.substr(0, brackets) + "." + std::to_string(index) + pattern.substr(brackets + 2);
}

}  // namespace vtoe::config
