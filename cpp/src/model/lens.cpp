// The logit lens: what each layer "would predict". The residual stream entering every layer goes through the main
// stack's final norm and the head (an MLM head's transform included), and so does the stream leaving the last layer
// (the pass's hidden state, already normed); each row's softmax gives its most probable tokens. The stream comes from
// a ForwardCache that holds this very input's pass (its layer inputs and hidden state), or else from a fresh pass
// that records it (Output::residual). Either way the rows are the same bits, so the lens is too: only the head's
// products are left to compute, in blocks of rows across layers, each row's top k and log-sum-exp read in one pass.
#include <algorithm>
#include <memory>
#include <stdexcept>

#include "../attend.hpp"
#include "../json.hpp"
#include "../parallel.hpp"
#include "../sizes.hpp"
#include "pass.hpp"
#include "steps.hpp"

namespace attnscope {
namespace model {
namespace {

// The lens rows first..end − 1 (of the layers + 1) of `entering` [L, T, d] (the stream entering each layer, which the final
// norm turns into the head's input) and `output` [T, d] (the stream leaving the last layer, after the final norm).
Transformer::Lens read_lens(const Transformer::Impl& m, const float* entering, const float* output, std::size_t T, std::size_t k,
                            std::size_t first_row, std::size_t end_row, const char* call)
{
    const plan::Stack& main = m.plan.main();
    const std::size_t L = main.layers(), d = main.width(), vocab = m.plan.head.vocab;
    Transformer::Lens lens;
    lens.first_row = first_row;
    lens.probabilities = Tensor({end_row - first_row, T, k});
    lens.ids.resize((end_row - first_row) * T * k);
    // Rows of the stream are numbered over every lens row (layer · T + position); `begin` is the first asked for.
    const std::size_t begin = first_row * T;
    // Each row's top k, by row blocks over both threads; a row's result depends on that row only.
    auto top_rows = [&](const float* logits, std::size_t rows, std::size_t first) {
        const std::size_t tasks = detail::task_count(rows, double(rows) * double(vocab), double(1 << 18));
        auto body = [&](std::size_t task, std::size_t) {
            for (std::size_t i = task * rows / tasks, end = (task + 1) * rows / tasks; i < end; ++i) {
                const std::size_t at = (first + i - begin) * k;
                steps::top_k_softmax(logits + i * vocab, vocab, k, lens.ids.data() + at, lens.probabilities.data.data() + at);
            }
        };
        detail::parallel_for(tasks, body);
    };
    // Rows through the head in blocks across layers: a short input's layers share one product of up to 128 rows (the
    // head's panels, GPT-2's 154 MB, are read from memory once a product), within 32 MiB of logits; a longer input's
    // blocks are its layers, as many logits as forward's own. Blocks of whole register tiles: a block's last tile is
    // a full one at the tile products use now (the relaxed build's 6 rows, or 5 under Node 20: 128 would leave 2 or 3).
    const std::size_t below = L * T, rows_end = end_row * T, tile = detail::matmul_tile_rows(m.weights.head.type == kernels::PanelType::f32);
    const std::size_t shared = std::clamp<std::size_t>((std::size_t(8) << 20) / vocab, 1, 128);
    const std::size_t block = std::min(rows_end - begin, (std::max(T, shared) + tile - 1) / tile * tile);
    std::vector<float> normed(block * d), scratch(block * d);
    // Not cleared: the head writes every logit of a block's rows before its top k reads them (clearing GPT-2's block
    // of 128 rows would write 25.7 MB a call for nothing).
    const std::unique_ptr<float[]> logits(new float[detail::checked_mul(block, vocab, call)]);
    for (std::size_t first = begin; first < rows_end; first += block) {
        const std::size_t rows = std::min(block, rows_end - first);
        // The block's rows entering a layer go through the final norm; those leaving the last are normed already.
        const std::size_t normed_rows = first < below ? std::min(rows, below - first) : 0;
        if (normed_rows && main.final_norm.present())
            steps::norm_rows(main.final_norm, m.weights.stacks.back().final_norm, entering + first * d, normed_rows, d, normed.data());
        else if (normed_rows)
            std::copy_n(entering + first * d, normed_rows * d, normed.begin());
        if (rows > normed_rows) {
            const float* h = output + (first + normed_rows - below) * d;
            std::copy(h, h + (rows - normed_rows) * d, normed.begin() + std::ptrdiff_t(normed_rows * d));
        }
        run_head(m, normed.data(), rows, scratch.data(), logits.get());
        top_rows(logits.get(), rows, first);
    }
    return lens;
}

}  // namespace
}  // namespace model

Transformer::Lens Transformer::logit_lens(const Request& request, std::size_t k, LensRows rows) { return logit_lens(request, k, nullptr, rows); }

Transformer::Lens Transformer::logit_lens(const Request& request, std::size_t k, const ForwardCache& cache, LensRows rows)
{
    return logit_lens(request, k, &cache, rows);
}

Transformer::Lens Transformer::logit_lens(const Request& request, std::size_t k, const ForwardCache* cache, LensRows rows)
{
    Request r = request;
    if (!r.call) r.call = "logitLens";
    const char* call = r.call;
    const Impl& m = *impl_;
    const std::size_t vocab = m.plan.head.vocab, most = std::min<std::size_t>(vocab, 100);
    if (!m.config.has_lm_head) throw std::invalid_argument(json::join({call, ": this model has no language-model head to read the layers through"}));
    if (k < 1 || k > most)
        throw std::invalid_argument(json::join({call, ": options.k: expected a whole number from 1 to ", json::Num(most), " (tokens per position), got ", json::Num(k)}));
    const std::size_t lens_rows = m.plan.main().layers() + 1, first = rows.first, end = rows.end.value_or(lens_rows);
    if (first >= end || end > lens_rows)
        throw std::invalid_argument(json::join({call, ": options.layers: expected [start, end] with 0 ≤ start < end ≤ ", json::Num(lens_rows),
                                                " (the lens's rows: the stream entering each layer, then leaving the last), got [",
                                                json::Num(first), ", ", json::Num(end), "]"}));
    r.need_attention = false;
    r.keep_heads = false;
    model::check_request(m.plan, r, call);
    const std::size_t T = r.tokens.size();
    // Through a cache of this input's own pass: its rows, not a pass of their own (another model's cache is refused).
    if (const float* kept = cache ? model::kept_layer_input(*cache->state, *this, r, 0) : nullptr) {
        Lens lens = model::read_lens(m, kept, model::kept_output(*cache->state), T, k, first, end, call);
        lens.from_cache = true;
        return lens;
    }
    r.logits_to_keep = 1;  // the lens runs the head over the last layer's rows itself, with the other layers'
    r.keep_residual = true;
    const Output out = forward(r);
    return model::read_lens(m, out.residual.data.data(), out.hidden.data.data(), T, k, first, end, call);
}

}  // namespace attnscope
