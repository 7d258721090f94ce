// Zero-filled growth of a vector of a trivial type, at memcpy's speed.
#pragma once

#include <algorithm>
#include <cstddef>
#include <type_traits>
#include <vector>

namespace attnscope {
namespace detail {

/// `v` with n elements, those past its old size zero (what resize(n) does), for big buffers. resize() and assign()
/// construct one element at a time through libc++'s allocator: in the sources built for size (-Oz; CMakeLists.txt) a
/// store per float at best, a call per float where libc++ is not inlined. Zeroing GPT-2 small's 0.5 GB of weights
/// took 0.37 s and 0.8 s at load. An insert from an array of zeros is a memcpy per block (memory.copy:
/// CMakeLists.txt builds with bulk memory). Grows to n exactly when it must reallocate (resize() may take twice the
/// capacity), so a buffer that grows a little at a time (a decoder's maps, step by step) keeps assign().
template <class T>
void resize_zeroed(std::vector<T>& v, std::size_t n)
{
    static_assert(std::is_trivially_copyable<T>::value, "resize_zeroed: a trivial type, copied with memcpy");
    if (n <= v.size()) {
        v.resize(n);
        return;
    }
    v.reserve(n);
    static const T zeros[4096] = {};
    for (std::size_t left = n - v.size(); left > 0; left = n - v.size())
        v.insert(v.end(), zeros, zeros + std::min<std::size_t>(left, 4096));
}

/// `v` as n zeros (assign(n, T())).
template <class T>
void assign_zeroed(std::vector<T>& v, std::size_t n)
{
    v.clear();
    resize_zeroed(v, n);
}

}  // namespace detail
}  // namespace attnscope
