// Reading a small text file whole: the config file, the web config and the
// node-name-map all go through it.
#pragma once

#include <cstddef>
#include <string>

namespace ibfx {

// Whole file, or ConfigError "<path>: cannot read: <why>". The size cap keeps
// a wrong path (a device, a huge log) from exhausting memory.
std::string read_text_file(const std::string& path, std::size_t max_bytes);

}  // namespace ibfx
