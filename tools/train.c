/*
 * paralab-train — trains the digits MLP (paralab/mlp.h), or the block model
 * of Labs 08-11 (paralab/blocks.h), on one device: the one-device run every
 * parallel lab is compared with.
 *
 *   build/sim/bin/paralab-train [--model mlp|blocks] [--hidden h] [--layers L]
 *                               [--epochs N] [--batch B] [--seed S]
 *                               [--optimizer adamw|sgd] [--lr X] [--data FILE]
 *
 * The block model trains as Lab 08 does on one rank (--devices 1): AdamW
 * only, the epoch's last partial batch dropped, the same shuffle; its
 * numbers are Lab 08's.
 *
 * Per epoch it prints the mean training loss (summed per-sample losses over
 * the samples), the training accuracy (as the epoch went), the test
 * accuracy and loss after it, and training samples per second. On a
 * terminal a progress line shows the batches of the running epoch. Ctrl-C
 * stops after the current batch (exit status 130). Bad options: a message
 * and exit status 2; no data: "run make data", exit status 2.
 */
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime.h>

#include "paralab/cli.h"
#include "paralab/cuda_check.h"
#include "paralab/clock.h"
#include "paralab/cli.h"
#include "paralab/data.h"
#include "paralab/blocks.h"
#include "paralab/device.h"
#include "paralab/mlp.h"
#include "paralab/plural.h"
#include "paralab/tp.h"

static volatile sig_atomic_t interrupted;
static void on_sigint(int sig)
{
    (void)sig;
    interrupted = 1;
}

typedef struct {
    int epochs, batch, sgd;
    int blocks;                                          /* --model blocks */
    long hidden, layers;                                 /* its h and L */
    const char *hidden_arg, *layers_arg, *optimizer_arg; /* as given (NULL: not) */
    unsigned long long seed;
    double lr;
    const char *data;
} options;

static void usage(FILE *f)
{
    fprintf(f, "usage: paralab-train [options]\n"
               "Trains the digits MLP (64 -> 128 -> 128 -> 10, GELU), or the block model of\n"
               "Labs 08-11, on one device.\n\n"
               "  --model NAME       mlp (default) or blocks: residual MLP blocks\n"
               "                     x + W2 GELU(W1 LN(x) + b1) + b2 (paralab/blocks.h)\n"
               "  --hidden h         blocks: the residual stream's width (1..1024, default 64;\n"
               "                     W1 h -> 4h, W2 4h -> h)\n"
               "  --layers L         blocks: the blocks (1..64, default 2)\n"
               "  --epochs N         passes over the training set (1..1000, default 20)\n"
               "  --batch B          samples per step (1..1438, default 64)\n"
               "  --seed S           initialisation and shuffle seed (default 0)\n"
               "  --optimizer NAME   adamw (default) or sgd (momentum 0.9; the MLP only)\n"
               "  --lr X             learning rate (default 0.005 for adamw, 0.1 for sgd;\n"
               "                     0.002 for the blocks, as Lab 08)\n"
               "  --data FILE        the digits CSV (default data/digits.csv; make data)\n"
               "  -h, --help         this help\n");
}

static int parse(int argc, char **argv, options *o)
{
    *o = (options){.epochs = 20,
                   .batch = 64,
                   .seed = 0,
                   .lr = -1,
                   .data = "data/digits.csv",
                   .hidden = 64,
                   .layers = 2};
    static const struct option longs[] = {{"epochs", required_argument, 0, 'e'},
                                          {"batch", required_argument, 0, 'b'},
                                          {"seed", required_argument, 0, 's'},
                                          {"optimizer", required_argument, 0, 'o'},
                                          {"lr", required_argument, 0, 'l'},
                                          {"data", required_argument, 0, 'd'},
                                          {"model", required_argument, 0, 'm'},
                                          {"hidden", required_argument, 0, 'H'},
                                          {"layers", required_argument, 0, 'L'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    int c;
    long v;
    const char *bad = NULL;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
        switch (c) {
        case 'e':
            if (!(bad = pl_parse_long("--epochs", optarg, 1, 1000, &v))) o->epochs = (int)v;
            break;
        case 'b':
            if (!(bad = pl_parse_long("--batch", optarg, 1, 1438, &v))) o->batch = (int)v;
            break;
        case 's':
            if (!(bad = pl_parse_long("--seed", optarg, 0, 2147483647L, &v)))
                o->seed = (unsigned long long)v;
            break;
        case 'm':
            if (!strcmp(optarg, "blocks"))
                o->blocks = 1;
            else if (!strcmp(optarg, "mlp"))
                o->blocks = 0;
            else {
                fprintf(stderr, "paralab-train: --model '%s': choose mlp or blocks\n", optarg);
                return 2;
            }
            break;
        case 'H':
            o->hidden_arg = optarg;
            bad = pl_parse_long("--hidden", optarg, 1, 1024, &o->hidden);
            break;
        case 'L':
            o->layers_arg = optarg;
            bad = pl_parse_long("--layers", optarg, 1, PL_BLOCKS_MAX, &o->layers);
            break;
        case 'o':
            o->optimizer_arg = optarg;
            if (!strcmp(optarg, "sgd"))
                o->sgd = 1;
            else if (strcmp(optarg, "adamw")) {
                fprintf(stderr, "paralab-train: --optimizer '%s': choose adamw or sgd\n", optarg);
                return 2;
            }
            break;
        case 'l': {
            const char *e = pl_parse_double("--lr", optarg, 0, 10, 1, &o->lr);
            if (e) {
                fprintf(stderr, "paralab-train: %s\n", e);
                return 2;
            }
            break;
        }
        case 'd':
            o->data = optarg;
            break;
        case 'h':
            usage(stdout);
            return 1;
        default:
            fprintf(stderr, "paralab-train: unknown option '%s' (see --help)\n", argv[optind - 1]);
            return 2;
        }
        if (bad) {
            fprintf(stderr, "paralab-train: %s\n", bad);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "paralab-train: unexpected argument '%s' (see --help)\n", argv[optind]);
        return 2;
    }
    if (!o->blocks && (o->hidden_arg || o->layers_arg)) {
        fprintf(stderr,
                "paralab-train: %s %s: only the block model has a width and depth to choose "
                "(add --model blocks; the MLP is 64 -> 128 -> 128 -> 10)\n",
                o->hidden_arg ? "--hidden" : "--layers",
                o->hidden_arg ? o->hidden_arg : o->layers_arg);
        return 2;
    }
    if (o->blocks && o->sgd) {
        fprintf(stderr,
                "paralab-train: --optimizer %s: the block model trains with AdamW only "
                "(as Labs 08-11 do); choose adamw or leave --optimizer out\n",
                o->optimizer_arg);
        return 2;
    }
    if (o->lr < 0) o->lr = o->sgd ? 0.1 : o->blocks ? 2e-3 : 5e-3; /* blocks: Lab 08's */
    return 0;
}

#define CK(call) cudaCheck(call) /* paralab/cuda_check.h: print, exit 1 */

/* Loss sum and rows right over a whole set, in batches (no update). */
static void evaluate(pl_mlp *m, const pl_dataset *ds, int B, float *dx, int *dy, float *hx, int *hy,
                     const int *order, double *loss, int *correct)
{
    *loss = 0;
    CK(pl_mlp_reset_correct(m, 0));
    for (int k = 0; k < pl_batch_count(ds->n, B); k++) {
        int size = pl_batch_size(ds->n, B, k);
        pl_gather_batch(ds, order, B, k, hx, hy);
        CK(cudaMemcpy(dx, hx, (size_t)size * PL_DIGITS_FEATURES * sizeof(float),
                      cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dy, hy, (size_t)size * sizeof(int), cudaMemcpyHostToDevice));
        CK(pl_mlp_forward(m, dx, size, 0));
        CK(pl_mlp_loss(m, dy, size, 0.0f, 0));
        float s;
        CK(cudaMemcpy(&s, m->loss_sum, sizeof s, cudaMemcpyDeviceToHost));
        *loss += s;
    }
    CK(cudaMemcpy(correct, m->correct, sizeof *correct, cudaMemcpyDeviceToHost));
}

/* ---- the block model ------------------------------------------------------------------ */

/* A pl_blocks call (int: 0 or an error with the reason in tp->error): on
 * failure print it and exit 1, as cudaCheck does. */
static void tp_check(int rc, const pl_tp *tp, const char *call)
{
    if (!rc) return;
    fprintf(stderr, "paralab-train: %s\n", tp->error[0] ? tp->error : call);
    exit(1);
}
#define TPCK(call, tp) tp_check((call), (tp), #call)

/* The test set in batches of up to B rows (the last one shorter), no
 * update: the per-row losses summed, the rows right. */
static void evaluate_blocks(pl_blocks *m, const pl_dataset *ds, int B, float *dx, int *dy,
                            float *hx, int *hy, const int *order, double *loss, int *correct)
{
    *loss = 0;
    CK(pl_blocks_reset_correct(m, 0));
    for (int k = 0; k < pl_batch_count(ds->n, B); k++) {
        int size = pl_batch_size(ds->n, B, k);
        pl_tp tp;
        char err[256];
        if (pl_tp_init(&tp, NULL, 0, size, 0, err, sizeof err)) {
            fprintf(stderr, "paralab-train: %s\n", err);
            exit(1);
        }
        pl_gather_batch(ds, order, B, k, hx, hy);
        CK(cudaMemcpy(dx, hx, (size_t)size * PL_DIGITS_FEATURES * sizeof(float),
                      cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dy, hy, (size_t)size * sizeof(int), cudaMemcpyHostToDevice));
        TPCK(pl_blocks_forward(m, &m->acts, &tp, NULL, dx, NULL), &tp);
        TPCK(pl_blocks_loss(m, &m->acts, &tp, dy, 0.0f), &tp);
        float s;
        CK(cudaMemcpy(&s, m->loss_sum, sizeof s, cudaMemcpyDeviceToHost));
        *loss += s;
    }
    CK(cudaMemcpy(correct, m->correct, sizeof *correct, cudaMemcpyDeviceToHost));
}

/* The block model on one device, as Lab 08 trains it on one rank: every
 * epoch pl_shuffle(seed, epoch), n / B full batches (the last partial one
 * dropped), the batch's mean loss, AdamW; then the whole test set. */
static int train_blocks(const options *o, pl_digits *d)
{
    pl_blocks_config c = pl_blocks_config_make((int)o->hidden, (int)o->layers);
    pl_blocks_layout lay;
    char err[512];
    if (pl_blocks_layout_make(&lay, &c, pl_blocks_whole(&c), err, sizeof err)) {
        fprintf(stderr, "paralab-train: %s\n", err);
        return 2;
    }
    int B = o->batch, maxn = d->train.n > d->test.n ? d->train.n : d->test.n;
    pl_blocks m;
    CK(pl_blocks_create(&m, &lay, B, B, o->seed));
    pl_tp tp;
    if (pl_tp_init(&tp, NULL, 0, B, 0, err, sizeof err)) {
        fprintf(stderr, "paralab-train: %s\n", err);
        return 1;
    }
    float *hx = malloc((size_t)B * PL_DIGITS_FEATURES * sizeof *hx), *dx;
    int *hy = malloc((size_t)B * sizeof *hy), *order = malloc((size_t)maxn * sizeof *order), *dy;
    int *ident = malloc((size_t)maxn * sizeof *ident);
    if (!hx || !hy || !order || !ident) {
        fprintf(stderr, "paralab-train: out of memory\n");
        return 1;
    }
    for (int i = 0; i < maxn; i++) ident[i] = i;
    CK(cudaMalloc((void **)&dx, (size_t)B * PL_DIGITS_FEATURES * sizeof(float)));
    CK(cudaMalloc((void **)&dy, (size_t)B * sizeof(int)));
    int tty = isatty(STDOUT_FILENO), nb = d->train.n / B;
    signal(SIGINT, on_sigint);
    printf("paralab-train: the block model (h %d, f %d, %d block%s), %d training and %d test "
           "samples, batch %d (%d steps an epoch, the last %d samples dropped), AdamW, weight "
           "decay 0.01 (lr %g), seed %llu, %ld parameters\n",
           c.hidden, c.ffn, c.layers, pl_s(c.layers), d->train.n, d->test.n, B, nb,
           d->train.n - nb * B, o->lr, o->seed, pl_blocks_count(&c));
    double test_acc = 0;
    int epoch = 0;
    for (epoch = 1; epoch <= o->epochs && !interrupted; epoch++) {
        pl_shuffle(order, d->train.n, o->seed, epoch);
        CK(pl_blocks_reset_correct(&m, 0));
        double loss = 0, t0 = pl_now();
        int seen = 0;
        for (int k = 0; k < nb && !interrupted; k++) {
            pl_gather_batch(&d->train, order, B, k, hx, hy);
            CK(cudaMemcpy(dx, hx, (size_t)B * PL_DIGITS_FEATURES * sizeof(float),
                          cudaMemcpyHostToDevice));
            CK(cudaMemcpy(dy, hy, (size_t)B * sizeof(int), cudaMemcpyHostToDevice));
            TPCK(pl_blocks_forward(&m, &m.acts, &tp, NULL, dx, NULL), &tp);
            TPCK(pl_blocks_loss(&m, &m.acts, &tp, dy, 1.0f / (float)B), &tp); /* the mean */
            TPCK(pl_blocks_backward(&m, &m.acts, &tp, NULL, dx, NULL, NULL), &tp);
            TPCK(pl_blocks_finish_grads(&m, &tp), &tp);
            CK(pl_blocks_adamw(&m, (float)o->lr, 0));
            float s;
            CK(cudaMemcpy(&s, m.loss_sum, sizeof s, cudaMemcpyDeviceToHost));
            loss += s;
            seen += B;
            if (tty) {
                printf("\r\033[Kepoch %d/%d  batch %d/%d  loss %.4f", epoch, o->epochs, k + 1, nb,
                       loss / seen);
                fflush(stdout);
            }
        }
        double secs = pl_now() - t0;
        int train_right = 0, test_right = 0;
        CK(cudaMemcpy(&train_right, m.correct, sizeof train_right, cudaMemcpyDeviceToHost));
        if (interrupted) break;
        double test_loss;
        evaluate_blocks(&m, &d->test, B, dx, dy, hx, hy, ident, &test_loss, &test_right);
        test_acc = 100.0 * test_right / d->test.n;
        printf("%sepoch %2d/%d  loss %.4f  train %5.1f %%  test %5.1f %% (loss %.4f)  %.0f "
               "samples/s\n",
               tty ? "\r\033[K" : "", epoch, o->epochs, loss / seen, 100.0 * train_right / seen,
               test_acc, test_loss / d->test.n, seen / secs);
        fflush(stdout);
    }
    if (interrupted)
        printf("%sstopped by Ctrl-C in epoch %d\n", tty ? "\r\033[K" : "", epoch);
    else
        printf("test accuracy %.1f %% after %d epoch%s (the goal: at least 95 %% within 20)\n",
               test_acc, o->epochs, pl_s(o->epochs));
    cudaFree(dx);
    cudaFree(dy);
    pl_blocks_destroy(&m);
    free(hx);
    free(hy);
    free(order);
    free(ident);
    return interrupted ? 130 : 0;
}

int main(int argc, char **argv)
{
    options o;
    int rc = parse(argc, argv, &o);
    if (rc) return rc == 1 ? 0 : rc;
    pl_digits d;
    char err[512];
    int st = pl_digits_load(o.data, &d, err, sizeof err);
    if (st) {
        fprintf(stderr, "paralab-train: %s\n", err);
        return 2;
    }
    const char *why = pl_device_problem("paralab-train");
    if (why) {
        fprintf(stderr, "%s\n", why);
        pl_digits_free(&d);
        return 1;
    }
    if (o.blocks) {
        rc = train_blocks(&o, &d);
        pl_digits_free(&d);
        return rc;
    }
    pl_mlp_config cfg = pl_mlp_default();
    pl_mlp m;
    CK(pl_mlp_create(&m, &cfg, o.batch, o.seed));
    int B = o.batch, maxn = d.train.n > d.test.n ? d.train.n : d.test.n;
    float *hx = malloc((size_t)B * PL_DIGITS_FEATURES * sizeof *hx), *dx;
    int *hy = malloc((size_t)B * sizeof *hy), *order = malloc((size_t)maxn * sizeof *order), *dy;
    int *ident = malloc((size_t)maxn * sizeof *ident);
    if (!hx || !hy || !order || !ident) {
        fprintf(stderr, "paralab-train: out of memory\n");
        return 1;
    }
    for (int i = 0; i < maxn; i++) ident[i] = i;
    CK(cudaMalloc((void **)&dx, (size_t)B * PL_DIGITS_FEATURES * sizeof(float)));
    CK(cudaMalloc((void **)&dy, (size_t)B * sizeof(int)));
    int tty = isatty(STDOUT_FILENO);
    signal(SIGINT, on_sigint);
    printf("paralab-train: %d training and %d test samples, batch %d, %s (lr %g), seed %llu, "
           "%ld parameters\n",
           d.train.n, d.test.n, B, o.sgd ? "SGD, momentum 0.9" : "AdamW, weight decay 0.01", o.lr,
           o.seed, m.nparams);
    double test_acc = 0;
    int epoch = 0;
    for (epoch = 1; epoch <= o.epochs && !interrupted; epoch++) {
        pl_shuffle(order, d.train.n, o.seed, epoch);
        CK(pl_mlp_reset_correct(&m, 0));
        double loss = 0, t0 = pl_now();
        int nb = pl_batch_count(d.train.n, B), seen = 0;
        for (int k = 0; k < nb && !interrupted; k++) {
            int size = pl_batch_size(d.train.n, B, k);
            pl_gather_batch(&d.train, order, B, k, hx, hy);
            CK(cudaMemcpy(dx, hx, (size_t)size * PL_DIGITS_FEATURES * sizeof(float),
                          cudaMemcpyHostToDevice));
            CK(cudaMemcpy(dy, hy, (size_t)size * sizeof(int), cudaMemcpyHostToDevice));
            CK(pl_mlp_forward(&m, dx, size, 0));
            CK(pl_mlp_loss(&m, dy, size, 1.0f / (float)size, 0)); /* the batch's mean */
            CK(pl_mlp_backward(&m, dx, size, 0, 0));
            if (o.sgd)
                CK(pl_mlp_sgd(&m, (float)o.lr, 0.9f, 0.0f, 0));
            else
                CK(pl_mlp_adamw(&m, (float)o.lr, 0.9f, 0.999f, 1e-8f, 0.01f, 0));
            float s;
            CK(cudaMemcpy(&s, m.loss_sum, sizeof s, cudaMemcpyDeviceToHost));
            loss += s;
            seen += size;
            if (tty) {
                printf("\r\033[Kepoch %d/%d  batch %d/%d  loss %.4f", epoch, o.epochs, k + 1, nb,
                       loss / seen);
                fflush(stdout);
            }
        }
        double secs = pl_now() - t0;
        int train_right = 0, test_right = 0;
        CK(cudaMemcpy(&train_right, m.correct, sizeof train_right, cudaMemcpyDeviceToHost));
        if (interrupted) break;
        double test_loss;
        evaluate(&m, &d.test, B, dx, dy, hx, hy, ident, &test_loss, &test_right);
        test_acc = 100.0 * test_right / d.test.n;
        printf("%sepoch %2d/%d  loss %.4f  train %5.1f %%  test %5.1f %% (loss %.4f)  %.0f "
               "samples/s\n",
               tty ? "\r\033[K" : "", epoch, o.epochs, loss / seen, 100.0 * train_right / seen,
               test_acc, test_loss / d.test.n, seen / secs);
        fflush(stdout);
    }
    if (interrupted) {
        printf("%sstopped by Ctrl-C in epoch %d\n", tty ? "\r\033[K" : "", epoch);
    } else
        printf("test accuracy %.1f %% after %d epoch%s (the goal: at least 95 %% within 20)\n",
               test_acc, o.epochs, pl_s(o.epochs));
    cudaFree(dx);
    cudaFree(dy);
    pl_mlp_destroy(&m);
    pl_digits_free(&d);
    free(hx);
    free(hy);
    free(order);
    free(ident);
    return interrupted ? 130 : 0;
}
