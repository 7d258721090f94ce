/// Shapes, owning tensors and the non-owning views the attention entry points take.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace attnscope {

/// Row-major dimensions, outermost first: `[batch, seq, embed]`.
using Shape = std::vector<std::size_t>;

/// "[2, 3, 4]" — used in every error message so the caller sees what was given.
std::string to_string(const Shape& shape);

/// Product of the dimensions. Throws std::length_error naming `what` if it overflows size_t.
std::size_t checked_numel(const Shape& shape, const char* what);

/// Resizes `buffer` to `n` floats. Throws std::length_error naming `what` (then ": detail", when given) and the bytes
/// asked for when `n` floats cannot be addressed or memory cannot give them (instead of std::bad_alloc or an unnamed
/// vector error).
void resize_floats(std::vector<float>& buffer, std::size_t n, const char* what, const char* detail = nullptr);
void resize_floats(std::vector<float>& buffer, std::size_t n, const std::string& what);

/// The one shrink policy of every buffer kept from call to call (a layer's workspace, the binding's arenas): sizes
/// `buffer` for a use of `n` floats, first giving back a block above 1 MiB that holds more than four times `n`, so
/// one huge call does not pin its peak for the buffer's whole life (`n` = 0: nothing is known of the next use, and
/// only a block up to 1 MiB is kept). A block that is too small is freed before a bigger one is asked for;
/// `before_growing`, when given, sees the bytes about to be allocated then and may throw to refuse them.
/// Throws like resize_floats().
void reuse_floats(std::vector<float>& buffer, std::size_t n, const char* what,
                  void (*before_growing)(std::size_t bytes, const char* what) = nullptr);

/// An owning row-major float tensor.
struct Tensor {
    Shape shape;
    std::vector<float> data;

    Tensor() = default;
    /// Zero-filled tensor of the given shape.
    explicit Tensor(Shape shape);
    /// Takes `data`; throws std::invalid_argument if its size does not match `shape`.
    Tensor(Shape shape, std::vector<float> data);

    std::size_t numel() const { return data.size(); }
};

/// A read-only view of caller-owned row-major floats. The caller keeps the memory alive
/// for the duration of the call it is passed to.
struct TensorView {
    const float* data = nullptr;
    Shape shape;

    TensorView() = default;
    TensorView(const float* data, Shape shape) : data(data), shape(std::move(shape)) {}
    TensorView(const Tensor& t) : data(t.data.data()), shape(t.shape) {}  // NOLINT: implicit on purpose
};

/// How a mask's values are read.
enum class MaskKind {
    boolean,   ///< uint8: nonzero means the key is blocked (PyTorch nn.MultiheadAttention polarity)
    additive,  ///< float: added to the scaled scores; -inf blocks
};

/// A read-only view of a caller-owned mask. An empty view (the default) means "no mask"; the factories
/// below refuse a null pointer, so a mask that was meant cannot silently turn into no mask.
struct MaskView {
    MaskKind kind = MaskKind::boolean;
    const std::uint8_t* blocked = nullptr;  ///< set when kind == boolean
    const float* added = nullptr;           ///< set when kind == additive
    Shape shape;

    bool empty() const { return blocked == nullptr && added == nullptr; }

    /// Throws std::invalid_argument when `blocked` is null (use `MaskView{}` for no mask).
    static MaskView boolean(const std::uint8_t* blocked, Shape shape) {
        if (!blocked) throw std::invalid_argument("MaskView::boolean: blocked must not be null (MaskView{} means no mask)");
        return {MaskKind::boolean, blocked, nullptr, std::move(shape)};
    }
    /// Throws std::invalid_argument when `added` is null (use `MaskView{}` for no mask).
    static MaskView additive(const float* added, Shape shape) {
        if (!added) throw std::invalid_argument("MaskView::additive: added must not be null (MaskView{} means no mask)");
        return {MaskKind::additive, nullptr, added, std::move(shape)};
    }
};

}  // namespace attnscope
