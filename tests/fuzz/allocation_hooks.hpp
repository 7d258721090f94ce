// The sanitizer allocator's hooks the model fuzzers count live bytes with. clang ships their declarations; g++'s
// libasan (the 32-bit replay build) has the same functions without the header, so they are declared here then.
#pragma once

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
