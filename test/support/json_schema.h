// Validates a JSON text against one of the schemas in docs/ with
// python3-jsonschema (Debian's, run by /usr/bin/python3: a pyenv or venv
// python on PATH may lack it; the field's reference validator: every
// keyword of draft 2020-12, no hand-written subset of it).
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <string>

namespace ibfx::test {

// True when `text` validates against `schema_path`; the validator's error
// goes to stderr otherwise.
inline bool validates_against(const std::string& text, const std::string& schema_path) {
  char path[] = "/tmp/ibfx_schema_XXXXXX";
  const int fd = ::mkstemp(path);
  if (fd < 0) return false;
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  const std::string command =
      "/usr/bin/python3 -c 'import json,sys,jsonschema; "
      "jsonschema.validate(json.load(open(sys.argv[1])),"
      " json.load(open(sys.argv[2])))' " +
      std::string(path) + " " + schema_path;
  const int rc = written ? std::system(command.c_str()) : -1;
  ::unlink(path);
  return rc == 0;
}

}  // namespace ibfx::test
