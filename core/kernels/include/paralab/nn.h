/*
 * paralab/nn.h — the neural-network kernels (core/kernels/nn.cu), as host
 * functions that launch them on a stream and return the launch's
 * cudaError_t (cudaErrorInvalidValue for a negative size or a NULL pointer
 * with work to do). CUDA C, the same source on simulated and real GPUs.
 *
 * Layout: row-major float32; pointers are device pointers; a matrix X[M,N]
 * has M rows of N elements. A batch of B samples of width W is X[B,W].
 * Every launch declares its FLOPs and bytes (SIMT_LAUNCH_COST) so the
 * simulated GPU's modeled clock can time it.
 *
 * Sources: GELU in its tanh form (Hendrycks and Gimpel, "Gaussian Error
 * Linear Units", 2016, eq. in section 2); SGD with momentum as PyTorch's
 * torch.optim.SGD (v = mu v + g; w -= lr v); AdamW as Loshchilov and
 * Hutter, "Decoupled Weight Decay Regularization", ICLR 2019, Algorithm 2
 * (the decay is applied to the weight, not added to the gradient).
 * LayerNorm as Ba, Kiros and Hinton, "Layer Normalization", 2016, section
 * 3 (mean and standard deviation over the hidden units of one sample,
 * then an adaptive gain gamma and bias beta), eps inside the square root
 * as PyTorch's torch.nn.LayerNorm; its backward as
 * llm.c (Karpathy, 2024) documents layernorm_backward (dnorm = dy gamma;
 * dx = rstd (dnorm - mean(dnorm) - norm mean(dnorm norm))).
 */
#ifndef PARALAB_NN_H
#define PARALAB_NN_H

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Which operand is transposed: C = A·B (PL_NN), A·Bᵀ (PL_NT), Aᵀ·B (PL_TN). */
typedef enum { PL_NN, PL_NT, PL_TN } pl_mm_form;

/* C[M,N] = op(A)·op(B), or C += op(A)·op(B) with accumulate = 1.
 *   PL_NN: A[M,K], B[K,N]   (forward: Y = X·W)
 *   PL_NT: A[M,K], B[N,K]   (backward: dX = dY·Wᵀ)
 *   PL_TN: A[K,M], B[K,N]   (backward: dW = Xᵀ·dY)
 * Any M, N, K >= 0 (K = 0 gives zeros, or leaves C with accumulate). The
 * teaching kernel: 64x64 tiles of C per block of 256 threads, 4x4 outputs
 * per thread, A and B staged through shared memory 16 columns at a time. */
cudaError_t pl_k_matmul(float *C, const float *A, const float *B, int M, int N, int K,
                        pl_mm_form form, int accumulate, cudaStream_t stream);

/* Y[M,N] += b[N] (row by row). */
cudaError_t pl_k_bias_add(float *Y, const float *b, int M, int N, cudaStream_t stream);
/* db[N] = sum over rows of dY[M,N] (+= with accumulate = 1). */
cudaError_t pl_k_bias_grad(float *db, const float *dY, int M, int N, int accumulate,
                           cudaStream_t stream);

/* y = gelu(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), n elements
 * (in place allowed). */
cudaError_t pl_k_gelu(float *y, const float *x, long n, cudaStream_t stream);
/* dx = dy * gelu'(x) (dx may be dy). */
cudaError_t pl_k_gelu_backward(float *dx, const float *dy, const float *x, long n,
                               cudaStream_t stream);
/* y = max(x, 0); dx = x > 0 ? dy : 0. */
cudaError_t pl_k_relu(float *y, const float *x, long n, cudaStream_t stream);
cudaError_t pl_k_relu_backward(float *dx, const float *dy, const float *x, long n,
                               cudaStream_t stream);

/* Fused softmax and cross-entropy, one row per sample: probs[M,C] =
 * softmax(logits[M,C]) (max subtracted first), losses[M] = -log
 * probs[label] computed as log(sum exp(z - max)) - (z[label] - max). A label
 * outside 0..C-1 gives a NaN loss. */
cudaError_t pl_k_softmax_xent(float *probs, float *losses, const float *logits, const int *labels,
                              int M, int C, cudaStream_t stream);
/* Its backward for the loss sum(losses) * scale: dlogits = (probs - onehot)
 * * scale (dlogits may be probs). scale = 1 / (global batch) for a mean. */
cudaError_t pl_k_softmax_xent_backward(float *dlogits, const float *probs, const int *labels, int M,
                                       int C, float scale, cudaStream_t stream);
/* LayerNorm over each row of x[rows,h]: mean[r] and rstd[r] = 1 /
 * sqrt(var + 1e-5) (var the biased variance, the mean of (x - mean)^2;
 * eps = 1e-5 as PyTorch's default), y = (x - mean) rstd gamma + beta,
 * gamma[h] and beta[h]. mean and rstd (rows floats each) are kept for the
 * backward. y may be x. One block of 32 threads (a warp) per row,
 * reductions in a fixed order (the same inputs give the same bits).
 * rows < 1, h < 1 or a NULL pointer: cudaErrorInvalidValue. */
cudaError_t pl_k_layernorm(float *y, float *mean, float *rstd, const float *x, const float *gamma,
                           const float *beta, int rows, int h, cudaStream_t stream);
/* Its backward, from dy[rows,h] and the forward's x, mean, rstd and gamma:
 * dx[rows,h] (overwritten; dx may be dy), dgamma[h] = sum over rows of dy
 * (x - mean) rstd and dbeta[h] = sum over rows of dy (+= both with
 * accumulate = 1, as pl_k_bias_grad). No atomics: the same bits every
 * run. Errors as pl_k_layernorm. */
cudaError_t pl_k_layernorm_backward(float *dx, float *dgamma, float *dbeta, const float *dy,
                                    const float *x, const float *mean, const float *rstd,
                                    const float *gamma, int rows, int h, int accumulate,
                                    cudaStream_t stream);
/* Vocabulary-parallel softmax cross-entropy (Megatron-LM,
 * megatron/core/tensor_parallel/cross_entropy.py): the classes are split
 * over the t ranks of a TP group, rank i holding the logits[M, Cl] of
 * classes col0 .. col0 + Cl - 1, of which the first `valid` (0..Cl) are real
 * and the rest padding (the classes rounded up to a multiple of t): padding
 * never changes a loss, a gradient or a prediction. The loss of row r is
 * log(sum_c exp(z_c - max)) - (z_label - max), with max, the target logit
 * and the sum of exponentials each combined over the group by one
 * all-reduce (the caller's, between these kernels):
 *   1. pl_k_vp_max:      rowmax[r] = the largest valid local logit (-FLT_MAX
 *                        when valid = 0); all-reduce PL_MAX -> the global max
 *   2. pl_k_vp_partials: target[r] = z_label - max if the label is one of
 *                        this rank's valid classes, else 0; sumexp[r] = sum
 *                        over the valid local classes of exp(z - max);
 *                        all-reduce PL_SUM of each
 *   3. pl_k_vp_loss:     losses[r] = log(sumexp[r]) - target[r]
 *   4. pl_k_vp_backward: dlogits = (exp(z - max) / sumexp - [c == label]) *
 *                        scale on valid columns, 0 on padding (dlogits may
 *                        be logits)
 *   5. pl_k_vp_argmax:   pred[r] = col0 + the first valid local column equal
 *                        to max, else INT_MAX; all-reduce PL_MIN (int32) ->
 *                        the first largest class overall, as
 *                        pl_k_count_correct picks it
 *   6. pl_k_count_equal: correct[0] += the rows with pred[r] == labels[r]
 * With t = 1 (col0 = 0, valid = Cl = C, no all-reduce) losses and
 * dlogits equal pl_k_softmax_xent's and its backward's, bit for bit (the
 * same float operations in the same order), for labels in 0..C-1; a label
 * no rank holds adds no target (loss log(sumexp), not NaN). Padded columns
 * are never read. vp_max, vp_partials and vp_argmax take one thread per
 * row, its columns in order; vp_loss and vp_backward are element-wise. M
 * < 1, Cl < 1, valid outside 0..Cl, col0 < 0 (or col0 + Cl past INT_MAX)
 * or a NULL pointer: cudaErrorInvalidValue. */
cudaError_t pl_k_vp_max(float *rowmax, const float *logits, int M, int Cl, int valid,
                        cudaStream_t stream);
cudaError_t pl_k_vp_partials(float *sumexp, float *target, const float *logits, const int *labels,
                             const float *rowmax, int M, int Cl, int valid, int col0,
                             cudaStream_t stream);
cudaError_t pl_k_vp_loss(float *losses, const float *sumexp, const float *target, int M,
                         cudaStream_t stream);
cudaError_t pl_k_vp_backward(float *dlogits, const float *logits, const int *labels,
                             const float *rowmax, const float *sumexp, int M, int Cl, int valid,
                             int col0, float scale, cudaStream_t stream);
cudaError_t pl_k_vp_argmax(int *pred, const float *logits, const float *rowmax, int M, int Cl,
                           int valid, int col0, cudaStream_t stream);
cudaError_t pl_k_count_equal(int *correct, const int *pred, const int *labels, int M,
                             cudaStream_t stream);
/* out[0] = sum of x[0..n-1], in a fixed order (one block, a tree): the same
 * inputs give the same bits. */
cudaError_t pl_k_sum(float *out, const float *x, long n, cudaStream_t stream);
/* correct[0] += the rows of logits[M,C] whose first largest element is at
 * labels[row]. */
cudaError_t pl_k_count_correct(int *correct, const float *logits, const int *labels, int M, int C,
                               cudaStream_t stream);

/* SGD with momentum: v = mu v + (g + wd w); w -= lr v. */
cudaError_t pl_k_sgd(float *w, float *v, const float *g, long n, float lr, float mu, float wd,
                     cudaStream_t stream);
/* AdamW, step t >= 1: m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
 * w -= lr (m / (1-b1^t) / (sqrt(v / (1-b2^t)) + eps) + wd w). */
cudaError_t pl_k_adamw(float *w, float *m, float *v, const float *g, long n, float lr, float b1,
                       float b2, float eps, float wd, int t, cudaStream_t stream);

/* x = value; x *= a; y += a x. */
cudaError_t pl_k_fill(float *x, long n, float value, cudaStream_t stream);
cudaError_t pl_k_scale(float *x, long n, float a, cudaStream_t stream);
cudaError_t pl_k_axpy(float *y, const float *x, long n, float a, cudaStream_t stream);

/* pl_k_scale and pl_k_axpy take a count then a factor: swapped, C would
 * convert each silently (the factor to a count of 0: nothing scaled). In C
 * the compiler refuses a floating count or an integer factor (1 / n is 0:
 * write 1.0f / n). The definitions write the names in parentheses. */
#if !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define PL_IS_FLOATING_(x) _Generic((x), float : 1, double : 1, long double : 1, default : 0)
#define PL_COUNT_THEN_FACTOR_(call, n, a)                                                          \
    ((void)sizeof(struct {                                                                         \
        _Static_assert(!PL_IS_FLOATING_(n), call ": n, the element count, is a floating-point "    \
                                                 "value: are the count and the factor swapped?");  \
        _Static_assert(PL_IS_FLOATING_(a), call ": a, the factor, is an integer: are the count "   \
                                                "and the factor swapped (or is it 1 / n, which "   \
                                                "is 0: write 1.0f / n)?");                         \
        int unused_;                                                                               \
    }))
#define pl_k_scale(x, n, a, stream)                                                                \
    (PL_COUNT_THEN_FACTOR_("pl_k_scale(x, n, a, stream)", n, a), pl_k_scale(x, n, a, stream))
#define pl_k_axpy(y, x, n, a, stream)                                                              \
    (PL_COUNT_THEN_FACTOR_("pl_k_axpy(y, x, n, a, stream)", n, a), pl_k_axpy(y, x, n, a, stream))
#endif

#ifdef __cplusplus
}
#endif

#endif
