// The logit lens: what each layer "would predict". The residual stream the one pass records entering every layer and
// leaving the last (Output::residual) goes through the main stack's final norm and the head (an MLM head's transform
// included), and each row's softmax gives its most probable tokens. One layer's logits at a time: T × vocab floats.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "../json.hpp"
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
    r.keep_residual = true;
    const Output out = forward(r);
    const std::size_t L = main.layers(), T = r.tokens.size(), d = main.width();
    Lens lens;
    lens.probabilities = Tensor({L + 1, T, k});
    lens.ids.resize((L + 1) * T * k);
    std::vector<float> normed(T * d), scratch(T * d), logits(T * vocab);
    std::vector<std::int32_t> order(k);
    for (std::size_t l = 0; l <= L; ++l) {
        const float* x = out.residual.data.data() + l * T * d;
        if (main.final_norm.present()) model::steps::norm_rows(main.final_norm, m.weights.stacks.back().final_norm, x, T, d, normed.data());
        else std::copy(x, x + T * d, normed.begin());
        model::run_head(m, normed.data(), T, scratch.data(), logits.data());
        for (std::size_t t = 0; t < T; ++t) {
            const float* row = logits.data() + t * vocab;
            // The k largest by insertion into a sorted list (small code; k ≤ 100): ties keep the lower id first.
            std::size_t kept = 0;
            for (std::size_t v = 0; v < vocab; ++v) {
                if (kept == k && !(row[v] > row[order[k - 1]])) continue;
                std::size_t at = kept < k ? kept++ : k - 1;
                for (; at > 0 && row[v] > row[order[at - 1]]; --at) order[at] = order[at - 1];
                order[at] = std::int32_t(v);
            }
            const double top = row[order[0]];
            double sum = 0;
            for (std::size_t v = 0; v < vocab; ++v) sum += std::exp(double(row[v]) - top);
            for (std::size_t i = 0; i < k; ++i) {
                const std::size_t at = (l * T + t) * k + i;
                lens.ids[at] = order[i];
                lens.probabilities.data[at] = float(std::exp(double(row[order[i]]) - top) / sum);
            }
        }
    }
    return lens;
}

}  // namespace attnscope
