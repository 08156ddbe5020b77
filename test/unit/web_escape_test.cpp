// Escaping of untrusted node names for every context of the status page.
#include "views/web_escape.h"

#include <catch2/catch.hpp>
#include <string>

using namespace std::string_literals;

namespace ibfx {
namespace {

std::string json_of(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
}

std::string url_of(std::string_view s) {
  std::string out;
  append_url_component(out, s);
  return out;
}

}  // namespace

TEST_CASE("html escaping neutralizes markup in text and attributes", "[web_escape]") {
  CHECK(html_escaped("<script>alert(1)</script>") == "&lt;script&gt;alert(1)&lt;/script&gt;");
  CHECK(html_escaped("</title><b>") == "&lt;/title&gt;&lt;b&gt;");
  CHECK(html_escaped(R"(" onmouseover="x)") == "&quot; onmouseover=&quot;x");
  CHECK(html_escaped("it's") == "it&#39;s");
  CHECK(html_escaped("a&b") == "a&amp;b");
  CHECK(html_escaped("]]>") == "]]&gt;");
  CHECK(html_escaped("gpu0001 mlx5_0") == "gpu0001 mlx5_0");
}

TEST_CASE("html escaping replaces controls, NUL and invalid UTF-8", "[web_escape]") {
  const std::string fffd = "\xEF\xBF\xBD";
  CHECK(html_escaped("a\0b"s) == "a" + fffd + "b");
  CHECK(html_escaped("\x01\x1b[31m") == fffd + fffd + "[31m");
  CHECK(html_escaped("tab\there") == "tab\there");
  CHECK(html_escaped("\x7f") == fffd);
  CHECK(html_escaped("\xC2\x85") == fffd);      // U+0085, a C1 control
  CHECK(html_escaped("\xEF\xB7\x90") == fffd);  // U+FDD0, a noncharacter
  CHECK(html_escaped("\xEF\xBF\xBE") == fffd);  // U+FFFE
  // Ill-formed: a lone continuation byte, an overlong '<', a surrogate, a
  // truncated sequence at the end. None may turn into a '<'.
  CHECK(html_escaped("\x80") == fffd);
  CHECK(html_escaped("\xC0\xBC") == fffd + fffd);
  CHECK(html_escaped("\xED\xA0\x80") == fffd + fffd + fffd);
  CHECK(html_escaped("ab\xE2\x82") == "ab" + fffd);
  CHECK(html_escaped("\xF4\x90\x80\x80") == fffd + fffd + fffd + fffd);  // > U+10FFFF
  // Well-formed multi-byte text stays as it is.
  CHECK(html_escaped("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x94\xA5") ==
        "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x94\xA5");
}

TEST_CASE("json escaping gives a valid, script-inert string", "[web_escape]") {
  CHECK(json_of(R"(a"b\c)") == R"("a\"b\\c")");
  CHECK(json_of("</script><script>") == R"("<\/script><script>")");
  CHECK(json_of("a/b") == R"("a/b")");
  CHECK(json_of("\n\r\t\b\f") == R"("\n\r\t\b\f")");
  CHECK(json_of("a\0b"s) == R"("a\u0000b")");
  CHECK(json_of("\x1f\x7f") == R"("\u001F\u007F")");
  CHECK(json_of("x\xE2\x80\xA8y\xE2\x80\xA9") == R"("x\u2028y\u2029")");
  CHECK(json_of("\xFF]]>") == "\"\xEF\xBF\xBD]]>\"");
}

TEST_CASE("url components percent-encode every byte but the unreserved ones", "[web_escape]") {
  CHECK(url_of("leaf-r0-01_a.b~") == "leaf-r0-01_a.b~");
  CHECK(url_of("gpu0001 mlx5_0") == "gpu0001%20mlx5_0");
  CHECK(url_of("a&b=c#d?e/f%") == "a%26b%3Dc%23d%3Fe%2Ff%25");
  CHECK(url_of("<script>\"'") == "%3Cscript%3E%22%27");
  // Raw bytes, not sanitized: the server decodes them back to the same name.
  CHECK(url_of("\xFF\x00\xC3\xA9"s) == "%FF%00%C3%A9");
}

TEST_CASE("valid_utf8 replaces ill-formed sequences only", "[web_escape]") {
  CHECK(valid_utf8("plain") == "plain");
  CHECK(valid_utf8("a\xFF") == "a\xEF\xBF\xBD");
  CHECK(valid_utf8("\xE2\x80\xA8") == "\xE2\x80\xA8");
}

}  // namespace ibfx
