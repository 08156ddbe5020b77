#include "base/thread_name.h"

#include <pthread.h>

namespace ibfx {

void set_thread_name(const std::string& name) {
  // pthread_setname_np refuses (ERANGE) a name over 15 characters rather
  // than cutting it: cut it here, a name is only a hint.
  const std::string cut = name.substr(0, kMaxThreadName);
  pthread_setname_np(pthread_self(), cut.c_str());
}

std::string thread_name() {
  char buf[kMaxThreadName + 1] = {};
  if (pthread_getname_np(pthread_self(), buf, sizeof buf) != 0) return {};
  return buf;
}

}  // namespace ibfx
