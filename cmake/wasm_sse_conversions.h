/* Force-included before xsimd in Emscripten builds only (see CMakeLists.txt).
   Emscripten 3.1.6 emulates these two SSE conversions with scalar loops, which makes xsimd's exp
   (and so the softmax) several times slower; SIMD128 has direct equivalents. NaN and out-of-range
   lanes saturate instead of giving INT_MIN, which exp's range reduction never relies on. */
#pragma once
#include <emmintrin.h>
#include <wasm_simd128.h>
#undef _mm_cvttps_epi32
#define _mm_cvttps_epi32(a) ((__m128i)wasm_i32x4_trunc_sat_f32x4((v128_t)(a)))
#undef _mm_cvtps_epi32
#define _mm_cvtps_epi32(a) ((__m128i)wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_nearest((v128_t)(a))))
