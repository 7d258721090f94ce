// The bytes live at once while a model fuzzer reads or runs, counted through the sanitizer allocator's hooks (every
// malloc and operator new goes through it). clang ships the hooks' declarations; g++'s libasan (the 32-bit replay
// build) has the same functions without the header, so they are declared here then.
#pragma once

#include <algorithm>
#include <cstddef>

#if __has_include(<sanitizer/allocator_interface.h>)
#include <sanitizer/allocator_interface.h>
#else
extern "C" {
std::size_t __sanitizer_get_allocated_size(const volatile void* p);
int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void*, std::size_t),
                                              void (*free_hook)(const volatile void*));
}
#endif

namespace attnscope {
namespace fuzz {

/// While g_counting: the bytes live now, and the most live at once since the caller last set g_peak.
inline std::size_t g_live = 0, g_peak = 0;
inline bool g_counting = false;

inline void count_malloc(const volatile void*, std::size_t size)
{
    if (!g_counting) return;
    g_live += size;
    g_peak = std::max(g_peak, g_live);
}

inline void count_free(const volatile void* p)
{
    if (g_counting && p) g_live -= std::min(g_live, __sanitizer_get_allocated_size(const_cast<const void*>(p)));
}

/// Installs the counting hooks (from LLVMFuzzerInitialize).
inline void count_live_bytes() { __sanitizer_install_malloc_and_free_hooks(count_malloc, count_free); }

}  // namespace fuzz
}  // namespace attnscope
