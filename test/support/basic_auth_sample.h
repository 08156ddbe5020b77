// One user's basic-auth credentials for the tests of the web config, the
// HTTP security settings and the basic-auth check (written once: a unity
// batch would otherwise see the same constant defined twice).
#pragma once

namespace ibfx::test {

inline constexpr const char* kPassword = "prometheus-secret";
// bcrypt of kPassword at cost 4 (the lowest: the tests check many requests).
inline constexpr const char* kHash = "$2y$04$f1biYY3H.3VQXLPG4F43feJgyaSkCUy2efF1rRdCz2ZIr6DdHr6Nu";

}  // namespace ibfx::test
