/// How many threads the forward passes may use. One process-wide setting: the calling thread always does a share
/// of the work, so `set_num_threads(2)` starts one helper thread. Results do not depend on the setting: the work is
/// cut into the same pieces whatever the thread count, and each output element is computed by the same code, so
/// every thread count gives bit-identical results.
#pragma once

#include <cstddef>

namespace attnscope {

/// The most threads this build can run: 1 where threads are not available (the single-threaded WebAssembly
/// build), otherwise the hardware's concurrency (at least 1).
std::size_t max_threads();

/// Sets the threads forward() may use, the calling thread included, clamped to [1, max_threads()]. Helper threads
/// are started here (not during a forward pass) and kept alive until the setting is lowered. Returns the count
/// actually in use, which is lower than asked when the platform refuses to start more threads.
std::size_t set_num_threads(std::size_t threads);

/// The threads forward() uses now (1 until set_num_threads() is called).
std::size_t num_threads();

}  // namespace attnscope
