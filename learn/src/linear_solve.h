// Private: the small dense solve of the Levenberg-Marquardt fits (gemm_fit.cc, vtrain_fit.cc).
// Thread-safety: pure function.
#ifndef FMTE_LEARN_SRC_LINEAR_SOLVE_H_
#define FMTE_LEARN_SRC_LINEAR_SOLVE_H_

#include <array>
#include <cmath>
#include <cstddef>
#include <utility>

namespace fmte::learn {

// Solves A x = b (N x N, row-major) by Gaussian elimination with partial pivoting; false when A is
// singular.
template <size_t N>
bool SolveLinear(std::array<double, N * N> a, std::array<double, N> b, std::array<double, N>* x) {
  for (size_t c = 0; c < N; ++c) {
    size_t piv = c;
    for (size_t r = c + 1; r < N; ++r)
      if (std::fabs(a[r * N + c]) > std::fabs(a[piv * N + c])) piv = r;
    if (std::fabs(a[piv * N + c]) < 1e-300) return false;
    for (size_t k = 0; k < N; ++k) std::swap(a[c * N + k], a[piv * N + k]);
    std::swap(b[c], b[piv]);
    for (size_t r = c + 1; r < N; ++r) {
      const double f = a[r * N + c] / a[c * N + c];
      for (size_t k = c; k < N; ++k) a[r * N + k] -= f * a[c * N + k];
      b[r] -= f * b[c];
    }
  }
  for (size_t c = N; c-- > 0;) {
    double s = b[c];
    for (size_t k = c + 1; k < N; ++k) s -= a[c * N + k] * (*x)[k];
    (*x)[c] = s / a[c * N + c];
  }
  return true;
}

}  // namespace fmte::learn

#endif  // FMTE_LEARN_SRC_LINEAR_SOLVE_H_
