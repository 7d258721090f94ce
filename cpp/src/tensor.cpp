// Shape helpers and the owning Tensor.
#include "attnscope/tensor.hpp"

#include <new>
#include <stdexcept>

#include "number_text.hpp"
#include "sizes.hpp"
#include "zeroed.hpp"

namespace attnscope {

std::string to_string(const Shape& shape)
{
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i) s += ", ";
        s += std::to_string(shape[i]);
    }
    return s + "]";
}

std::size_t checked_numel(const Shape& shape, const char* what)
{
    std::size_t n = 1;
    for (std::size_t d : shape) n = detail::checked_mul(n, d, what);
    return n;
}

namespace {

// Grows `buffer` to `n` floats; the message names the buffer with `name()`, called only on failure (a name built at
// every call would allocate at every call, several times per forward pass).
template <class Name>
void resize_named(std::vector<float>& buffer, std::size_t n, const Name& name)
{
    const auto too_large = [&](const char* reason) {
        return std::length_error(name() + ": " + std::to_string(n) + " floats (" +
                                 detail::number_text(double(n) * sizeof(float) / (1024.0 * 1024.0)) + " MiB) " + reason);
    };
    if (n > buffer.max_size()) throw too_large("do not fit in the address space");
    try {
        detail::resize_zeroed(buffer, n);
    } catch (const std::bad_alloc&) {
        throw too_large("do not fit in the memory left");
    }
}

}  // namespace

void resize_floats(std::vector<float>& buffer, std::size_t n, const char* what, const char* detail)
{
    resize_named(buffer, n, [&] { return detail ? std::string(what) + ": " + detail : std::string(what); });
}

void resize_floats(std::vector<float>& buffer, std::size_t n, const std::string& what)
{
    resize_floats(buffer, n, what.c_str());
}

Tensor::Tensor(Shape s) : shape(std::move(s))
{
    resize_named(data, checked_numel(shape, "Tensor"), [&] { return "Tensor " + to_string(shape); });
}

void reuse_floats(std::vector<float>& buffer, std::size_t n, const char* what,
                  void (*before_growing)(std::size_t bytes, const char* what))
{
    constexpr std::size_t keep_floats = (std::size_t(1) << 20) / sizeof(float);
    if (buffer.size() > keep_floats && buffer.size() / 4 > n) std::vector<float>().swap(buffer);
    if (buffer.size() >= n) return;
    std::vector<float>().swap(buffer);  // let go of the old block before asking for a bigger one
    if (before_growing) before_growing(n <= SIZE_MAX / sizeof(float) ? n * sizeof(float) : SIZE_MAX, what);
    resize_floats(buffer, n, what);
}

Tensor::Tensor(Shape s, std::vector<float> d) : shape(std::move(s)), data(std::move(d))
{
    if (checked_numel(shape, "Tensor") != data.size())
        throw std::invalid_argument("Tensor: data has " + std::to_string(data.size()) + " values but shape " +
                                    to_string(shape) + " needs " + std::to_string(checked_numel(shape, "Tensor")));
}

}  // namespace attnscope
