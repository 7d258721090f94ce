// The logit lens: what each layer "would predict". The residual stream the one pass records entering every layer and
// leaving the last (Output::residual) goes through the main stack's final norm and the head (an MLM head's transform
// included), and each row's softmax gives its most probable tokens. forward's own logits are the last layer's rows;
// the layers below go through the head in blocks of rows, each row's top k and log-sum-exp read in one pass.
#include <algorithm>
#include <stdexcept>

#include "../json.hpp"
#include "../parallel.hpp"
#include "pass.hpp"
#include "steps.hpp"

namespace attnscope {

Transformer::Lens Transformer::logit_lens(const Request& request, std::size_t k)
{
    Request r = request;
    if (!r.call) r.call = "logitLens";
    const char* call = r.call;
    const Impl& m = *impl_;
    const plan::Stack& main = m.plan.main();
    const std::size_t vocab = m.plan.head.vocab, most = std::min<std::size_t>(vocab, 100);
    if (!m.config.has_lm_head) throw std::invalid_argument(json::join({call, ": this model has no language-model head to read the layers through"}));
    if (k < 1 || k > most)
        throw std::invalid_argument(json::join({call, ": options.k: expected 1 to ", json::Num(most), " tokens per position, got ", json::Num(k)}));
    r.need_attention = false;
    r.logits_to_keep = 0;  // every position's rows feed the lens
    r.keep_residual = true;
    const Output out = forward(r);  // its logits are the lens's last row of layers: the stream leaving the last
    const std::size_t L = main.layers(), T = r.tokens.size(), d = main.width();
    Lens lens;
    lens.probabilities = Tensor({L + 1, T, k});
    lens.ids.resize((L + 1) * T * k);
    // Each row's top k, by row blocks over both threads; a row's result depends on that row only.
    auto top_rows = [&](const float* logits, std::size_t rows, std::size_t first) {
        const std::size_t tasks = detail::task_count(rows, double(rows) * double(vocab), double(1 << 18));
        auto body = [&](std::size_t task, std::size_t) {
            for (std::size_t i = task * rows / tasks, end = (task + 1) * rows / tasks; i < end; ++i) {
                const std::size_t at = (first + i) * k;
                model::steps::top_k_softmax(logits + i * vocab, vocab, k, lens.ids.data() + at, lens.probabilities.data.data() + at);
            }
        };
        detail::parallel_for(tasks, body);
    };
    // The layers below the last through the head, in blocks of rows across layers: a short input's layers share one
    // product of up to 128 rows (the head's panels, GPT-2's 154 MB, are read from memory once a product), within
    // 32 MiB of logits; a longer input's blocks are its layers, as many logits as forward's own.
    const std::size_t below = L * T, shared = std::clamp<std::size_t>((std::size_t(8) << 20) / vocab, 1, 128);
    const std::size_t block = std::min(below, std::max(T, shared));
    std::vector<float> normed(block * d), scratch(block * d), logits(block * vocab);
    for (std::size_t first = 0; first < below; first += block) {
        const std::size_t rows = std::min(block, below - first);
        const float* x = out.residual.data.data() + first * d;
        if (main.final_norm.present()) model::steps::norm_rows(main.final_norm, m.weights.stacks.back().final_norm, x, rows, d, normed.data());
        else std::copy(x, x + rows * d, normed.begin());
        model::run_head(m, normed.data(), rows, scratch.data(), logits.data());
        top_rows(logits.data(), rows, first);
    }
    top_rows(out.logits.data.data(), T, below);
    return lens;
}

}  // namespace attnscope
