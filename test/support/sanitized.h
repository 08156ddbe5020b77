// Whether this test binary runs under a sanitizer, for the few assertions
// that measure the process (its RSS, its time) and would measure the
// sanitizer instead. GCC says so with __SANITIZE_ADDRESS__ and
// __SANITIZE_THREAD__, clang with __has_feature (the ASan tree is built with
// clang, the TSan tree with GCC: CMakePresets.json).
#pragma once

namespace ibfx::test {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

}  // namespace ibfx::test
