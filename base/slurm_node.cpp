#include "base/slurm_node.h"

namespace ibfx {

bool valid_node_host(std::string_view host) {
  if (host.empty() || host.size() > 255) return false;
  for (const char c : host) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

std::string safe_node_word(std::string_view text) {
  constexpr std::size_t kWordMax = 64;
  std::string out;
  for (const char c : text.substr(0, kWordMax)) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    std::string_view(".-_:/@+").find(c) != std::string_view::npos;
    out += ok ? c : '?';
  }
  return out.empty() ? "?" : out;
}

}  // namespace ibfx
