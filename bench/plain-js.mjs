// The baseline a user could write in an afternoon: multi-head self-attention on Float32Arrays, clean ikj loops.

/**
 * torch.nn.MultiheadAttention (batch_first, self-attention, one batch element) in plain JavaScript.
 * The projection matrices are transposed once at load time so every product runs the cache-friendly ikj order.
 */
export class PlainMultiHeadAttention {
  constructor({ embedDim, numHeads }) {
    this.E = embedDim;
    this.H = numHeads;
  }

  loadStateDict(state) {
    const E = this.E;
    const transpose = (w, rows, cols) => {
      const t = new Float32Array(rows * cols);
      for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) t[c * rows + r] = w[r * cols + c];
      return t;
    };
    this.inWT = transpose(state.in_proj_weight.data, 3 * E, E); // [E, 3E]
    this.inB = Float32Array.from(state.in_proj_bias.data);
    this.outWT = transpose(state['out_proj.weight'].data, E, E); // [E, E]
    this.outB = Float32Array.from(state['out_proj.bias'].data);
  }

  /** x [L, E] → { output [L, E], weights [H, L, L] or null }. */
  forward(x, L, needWeights = true) {
    const E = this.E, H = this.H, hd = E / H, N = 3 * E;
    const scale = 1 / Math.sqrt(hd);

    // qkv = x·Wᵀ + b: [L, 3E], q in columns [0, E), k in [E, 2E), v in [2E, 3E).
    const qkv = new Float32Array(L * N);
    matmulBias(x, this.inWT, this.inB, qkv, L, N, E);

    const ctx = new Float32Array(L * E);
    const weights = needWeights ? new Float32Array(H * L * L) : null;
    const rowScratch = needWeights ? null : new Float32Array(L);
    for (let h = 0; h < H; h++) {
      const qo = h * hd, ko = E + h * hd, vo = 2 * E + h * hd;
      for (let i = 0; i < L; i++) {
        const w = needWeights ? weights.subarray((h * L + i) * L, (h * L + i + 1) * L) : rowScratch;
        // scores: q_i · k_j, both rows contiguous in qkv.
        let max = -Infinity;
        const qi = i * N + qo;
        for (let j = 0; j < L; j++) {
          const kj = j * N + ko;
          let s = 0;
          for (let d = 0; d < hd; d++) s += qkv[qi + d] * qkv[kj + d];
          s *= scale;
          w[j] = s;
          if (s > max) max = s;
        }
        let sum = 0;
        for (let j = 0; j < L; j++) {
          const e = Math.exp(w[j] - max);
          w[j] = e;
          sum += e;
        }
        const inv = 1 / sum;
        for (let j = 0; j < L; j++) w[j] *= inv;
        // ctx_i += w_ij · v_j (ikj).
        const ci = i * E + h * hd;
        for (let j = 0; j < L; j++) {
          const a = w[j];
          const vj = j * N + vo;
          for (let d = 0; d < hd; d++) ctx[ci + d] += a * qkv[vj + d];
        }
      }
    }

    const output = new Float32Array(L * E);
    matmulBias(ctx, this.outWT, this.outB, output, L, E, E);
    return { output, weights };
  }

  dispose() {}
}

// C[M×N] = A[M×K]·B[K×N] + bias[N], ikj order.
function matmulBias(A, B, bias, C, M, N, K) {
  for (let i = 0; i < M; i++) {
    const ci = i * N;
    for (let j = 0; j < N; j++) C[ci + j] = bias[j];
    for (let k = 0; k < K; k++) {
      const a = A[i * K + k];
      const bk = k * N;
      for (let j = 0; j < N; j++) C[ci + j] += a * B[bk + j];
    }
  }
}
