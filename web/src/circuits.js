// A head's QK and OV circuits (W_Q·W_Kᵀ and W_V·W_O, Elhage et al. 2021) from the weights the core reads out for it
// (headWeights: the key/value head a GQA query head reads is the core's decision), in float64. Norms and singular
// values go through head_dim × head_dim Gram matrices (‖X·Yᵀ‖²_F = tr(XᵀX·YᵀY)), never the d × d product.

/**
 * XᵀX of a [d, n] block: n × n. The upper triangle only, four rows of X at a time, then mirrored: GPT-2 small's
 * circuitNorms() computes 576 of these (768 × 64 each), and this order took 1.3 ms of CPU a gram against 6.1 ms for
 * the plain triple loop over the whole square (Node 20).
 */
function gram(x, n) {
  const g = new Float64Array(n * n);
  const rows = x.length / n;
  let r = 0;
  for (; r + 3 < rows; r += 4) {
    const a = r * n, b = a + n, c = b + n, e = c + n;
    for (let i = 0; i < n; i++) {
      const ai = x[a + i], bi = x[b + i], ci = x[c + i], ei = x[e + i], gi = i * n;
      for (let j = i; j < n; j++) g[gi + j] += ai * x[a + j] + bi * x[b + j] + ci * x[c + j] + ei * x[e + j];
    }
  }
  for (; r < rows; r++) {
    const a = r * n;
    for (let i = 0; i < n; i++) {
      const ai = x[a + i], gi = i * n;
      for (let j = i; j < n; j++) g[gi + j] += ai * x[a + j];
    }
  }
  for (let i = 1; i < n; i++) for (let j = 0; j < i; j++) g[i * n + j] = g[j * n + i];
  return g;
}

/** The eigenvalues (and eigenvectors, columns of `v`) of a symmetric n × n matrix: cyclic Jacobi. */
function symmetricEigen(input, n) {
  const a = Float64Array.from(input), v = new Float64Array(n * n);
  for (let i = 0; i < n; i++) v[i * n + i] = 1;
  for (let sweep = 0; sweep < 60; sweep++) {
    let off = 0, all = 0;
    for (let i = 0; i < n * n; i++) (i % (n + 1) === 0 ? (all += a[i] * a[i]) : (off += a[i] * a[i]));
    if (off <= 1e-30 * (all + off)) break;
    for (let p = 0; p < n - 1; p++) {
      for (let q = p + 1; q < n; q++) {
        const apq = a[p * n + q];
        if (apq === 0) continue;
        const theta = (a[q * n + q] - a[p * n + p]) / (2 * apq);
        const t = (theta >= 0 ? 1 : -1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1), s = t * c;
        for (let k = 0; k < n; k++) {
          const kp = a[k * n + p], kq = a[k * n + q];
          a[k * n + p] = c * kp - s * kq;
          a[k * n + q] = s * kp + c * kq;
        }
        for (let k = 0; k < n; k++) {
          const pk = a[p * n + k], qk = a[q * n + k];
          a[p * n + k] = c * pk - s * qk;
          a[q * n + k] = s * pk + c * qk;
          const vp = v[k * n + p], vq = v[k * n + q];
          v[k * n + p] = c * vp - s * vq;
          v[k * n + q] = s * vp + c * vq;
        }
      }
    }
  }
  return { values: Array.from({ length: n }, (_, i) => a[i * n + i]), vectors: v };
}

/**
 * The singular values of X·Yᵀ from A = XᵀX and B = YᵀY: square roots of the eigenvalues of A·B, which are those of
 * the symmetric Sᵀ·A·S with B = S·Sᵀ (S = U·Λ^½ from B's eigenvectors). Largest first.
 */
function singularValues(a, b, n) {
  const { values: lambda, vectors: u } = symmetricEigen(b, n);
  const s = new Float64Array(n * n), as = new Float64Array(n * n), m = new Float64Array(n * n);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) s[i * n + j] = u[i * n + j] * Math.sqrt(Math.max(0, lambda[j]));
  for (let i = 0; i < n; i++) for (let k = 0; k < n; k++) for (let j = 0; j < n; j++) as[i * n + j] += a[i * n + k] * s[k * n + j];
  for (let k = 0; k < n; k++) for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) m[i * n + j] += s[k * n + i] * as[k * n + j];
  return Float32Array.from(symmetricEigen(m, n).values.map((x) => Math.sqrt(Math.max(0, x))).sort((x, y) => y - x));
}

/** X·Yᵀ of two [d, n] blocks: [d, d]. */
function product(x, y, d, n) {
  const out = new Float32Array(d * d);
  for (let i = 0; i < d; i++) {
    for (let j = 0; j < d; j++) {
      let sum = 0;
      for (let c = 0; c < n; c++) sum += x[i * n + c] * y[j * n + c];
      out[i * d + j] = sum;
    }
  }
  return out;
}

/** ‖X·Yᵀ‖_F from the two Gram matrices. */
function frobenius(a, b) {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i] * b[i];
  return Math.sqrt(Math.max(0, sum));
}

/** One head's circuits from its headWeights ({ kvHead, q, k, v, o }, each [d, headDim]). */
export function headCircuits(w) {
  const [d, n] = w.q.shape;
  return {
    kvHead: w.kvHead,
    qk: { data: product(w.q.data, w.k.data, d, n), shape: [d, d] },
    ov: { data: product(w.v.data, w.o.data, d, n), shape: [d, d] },
    qkSingularValues: { data: singularValues(gram(w.q.data, n), gram(w.k.data, n), n), shape: [n] },
    ovSingularValues: { data: singularValues(gram(w.v.data, n), gram(w.o.data, n), n), shape: [n] },
  };
}

/** The Frobenius norms of every head's circuits, `weightsOf(layer, head)` giving its headWeights. */
export function circuitNorms(layers, heads, weightsOf) {
  const qk = new Float32Array(layers * heads), ov = new Float32Array(layers * heads);
  for (let l = 0; l < layers; l++) {
    for (let h = 0; h < heads; h++) {
      const w = weightsOf(l, h), n = w.q.shape[1];
      qk[l * heads + h] = frobenius(gram(w.q.data, n), gram(w.k.data, n));
      ov[l * heads + h] = frobenius(gram(w.v.data, n), gram(w.o.data, n));
    }
  }
  return { qk: { data: qk, shape: [layers, heads] }, ov: { data: ov, shape: [layers, heads] } };
}
