// libFuzzer target: the status page's model and renderers with hostile node
// names. NodeDescriptions are set by whoever runs the host or the switch
// (64 arbitrary bytes, IBA 14.2.5.2); whatever they hold, the page must
// stay well-formed HTML with no tag of theirs, /status.json valid JSON,
// the switch view likewise, and nothing may crash.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "test/support/status_support.h"
#include "views/status_html.h"
#include "views/status_json.h"
#include "views/status_model.h"
#include "views/switch_view.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The input, cut at '\n', names the fixture's nodes in order (the root's
  // leaf first, then the other leaves, spines, core, HCAs).
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<std::pair<int, std::string>> names;
  std::size_t start = 0;
  for (int node = 0; start <= text.size() && node < 32; ++node) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    names.emplace_back(node, std::string(text.substr(start, end - start)));
    start = end + 1;
  }
  const ibfx::test::StatusFixture fx = ibfx::test::status_fixture(names);
  const ibfx::StatusModel model = ibfx::build_status_model(*fx.snapshot);
  const std::string html = ibfx::render_status_html(model);
  if (!ibfx::test::unexpected_tag(html).empty()) __builtin_trap();
  const std::string json = ibfx::render_status_json(model);
  if (!nlohmann::json::accept(json)) __builtin_trap();
  for (std::size_t n = 0; n < fx.snapshot->fabric->nodes.size(); n += 5) {
    const std::string view = ibfx::render_switch_html(*fx.snapshot, n);
    if (!ibfx::test::unexpected_tag(view).empty()) __builtin_trap();
  }
  // The name as typed into ?node= finds the node it names (or one named alike).
  if (!names.empty() && !ibfx::find_node_named(*fx.snapshot, names[0].second) &&
      !names[0].second.empty()) {
    __builtin_trap();
  }
  const std::string unknown = ibfx::render_unknown_node_html(text);
  if (!ibfx::test::unexpected_tag(unknown).empty()) __builtin_trap();
  return 0;
}
