// Replaces a file's contents all at once: a reader (or the next start after
// a crash or a power cut) finds either the old contents or the new ones,
// never a mix or a truncated file. The steps are the classic ones
// (rename(2) is atomic within a file system; the fsyncs make it durable):
// write "<path>.tmp" in the same directory, fsync it, rename it over
// <path>, fsync the directory so that the rename itself is on disk.
#pragma once

#include <string>
#include <string_view>

namespace ibfx {

// True when `contents` is now the file at `path`. False with `error` set
// ("write /var/lib/x/events.json.tmp: No space left on device") when any
// step failed: the file at `path` is then untouched, and the temporary file
// is removed. Never throws.
bool write_file_atomically(const std::string& path, std::string_view contents, std::string& error);

// Reads the whole file. False with `error` set (including ENOENT, with
// `missing` true) when it cannot be opened or read. Never throws.
bool read_whole_file(const std::string& path, std::string& contents, std::string& error,
                     bool& missing);

}  // namespace ibfx
