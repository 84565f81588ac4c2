/* The ray fit's rounds in C: edges along rays, their refinement, and the least-squares circle of every ball.
 *
 * vision/ray_fit.py says what the fit does and why; vision/ray_kernel.py is the Python face of this module (it
 * makes the geometry's tables, checks the arrays and allocates the outputs) and says why it is C. Here is only
 * the arithmetic, one pass per ball per ray.
 *
 * Windows are float32 (N, S, S), C order; every coordinate and sum is double. Built with -ffp-contract=off (see
 * setup.py): a fused multiply-add rounds differently, and a ray's decisions are thresholds, so without it the
 * Pi's aarch64 compiler would fit a few edges differently from x86-64.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* The fit's decisions (the geometry's tables come from Python). */
#define CONTRAST 8.0          /* grey levels a difference must fall by across an edge to refine the edge on it */
#define OUTLIER_PX 1.0        /* an edge further than this off a round's first fit is dropped */
#define BALANCED_SHARE 0.6    /* share of rays found for a free radius */
#define BALANCED_COV 0.25     /* and the most their imbalance (|sum cos| or |sum sin| over the count) may be */
#define NO_BALANCED_RATIO 0.97 /* the held radius's ratio when no ball of the batch is balanced */
#define RIDGE 1e-6            /* added to the normal matrices' diagonal: a ball with rays on one side stays solvable */
#define MAX_LEN 256           /* the most band samples or offsets a ray may have */

typedef struct {
    int n_rays;
    const double *cos, *sin, *basis; /* basis (K, 5): 1, cos, sin, cos 2t, sin 2t */
    int n_band;
    const double *band; /* the samples along a ray an edge is read from, in expected radii */
    double step;        /* between two of them */
    int below_run;      /* samples below one half after an edge: a real edge, not a gap at a contact */
    int n_offsets;
    const double *offsets; /* where a steepest fall is looked for about an edge, px */
} Tables;

static double clampd(double v, double lo, double hi) { return v < lo ? lo : (v > hi ? hi : v); }

/* Bilinear sample of one (S, S) window at (x, y), held a thousandth of a pixel inside it. */
static double sample(const float *win, int size, double x, double y) {
    double top = size - 1.001;
    x = clampd(x, 0.0, top);
    y = clampd(y, 0.0, top);
    int x0 = (int)x, y0 = (int)y;
    double fx = x - x0, fy = y - y0;
    const float *r0 = win + (size_t)y0 * size + x0, *r1 = r0 + size;
    double upper = r0[0] + fx * (double)(r0[1] - r0[0]);
    double lower = r1[0] + fx * (double)(r1[1] - r1[0]);
    return upper + fy * (lower - upper);
}

/* The edge of one ray: where the soft mask falls below one half and stays there for below_run samples, the
 * outermost such fall in the band (an inner dip, a dark patch on a black ball, is not the edge), placed by linear
 * interpolation between its two samples; *found says whether there is one. */
static double edge(const float *mask, int size, double cx, double cy, double c, double s, double radius,
                   const Tables *t, int *found) {
    double prof[MAX_LEN];
    for (int j = 0; j < t->n_band; j++) {
        double rho = radius * t->band[j];
        prof[j] = sample(mask, size, cx + c * rho, cy + s * rho);
    }
    int m = t->n_band - t->below_run, at = m - 1;
    *found = 0;
    for (int j = m - 1; j >= 0 && !*found; j--) {
        if (prof[j] < 0.5) continue;
        int run = 1;
        for (int k = 1; k <= t->below_run; k++)
            if (prof[j + k] >= 0.5) { run = 0; break; }
        if (run) { at = j; *found = 1; }
    }
    double p0 = prof[at], p1 = prof[at + 1];
    double frac = clampd((p0 - 0.5) / fmax(p0 - p1, 1e-6), 0.0, 1.0);
    return radius * t->band[at] + frac * radius * t->step;
}

/* Along one ray about r_edge: where the difference in win falls most steeply (the parabolic peak of its outward
 * central differences), and its mean over the three innermost and three outermost samples. */
static double steepest_fall(const float *win, int size, double cx, double cy, double c, double s, double r_edge,
                            const Tables *t, double *inside, double *outside) {
    double q[MAX_LEN];
    int n = t->n_offsets;
    for (int k = 0; k < n; k++) {
        double rho = r_edge + t->offsets[k];
        q[k] = sample(win, size, cx + c * rho, cy + s * rho);
    }
    double best = INFINITY;
    int j = 0;
    for (int k = 0; k < n - 2; k++) {
        double slope = q[k + 2] - q[k];
        if (slope < best) { best = slope; j = k; }
    }
    j = j < 1 ? 1 : (j > n - 4 ? n - 4 : j);
    double s0 = q[j + 1] - q[j - 1], s1 = q[j + 2] - q[j], s2 = q[j + 3] - q[j + 1];
    double denom = s0 - 2 * s1 + s2, delta = 0.0;
    if (fabs(denom) > 1e-6) delta = clampd(0.5 * (s0 - s2) / denom, -1.0, 1.0);
    *inside = (q[0] + q[1] + q[2]) / 3.0;
    *outside = (q[n - 1] + q[n - 2] + q[n - 3]) / 3.0;
    return r_edge + t->offsets[j + 1] + delta * 0.25;
}

/* The edge moved to the steepest outward fall of a colour difference within 2 px of it: the plain colour
 * distance's where the cloth beyond is clean, else the shadow-tolerant one's; kept where it was if neither falls
 * by CONTRAST across it. */
static double refined(const float *tolerant, const float *plain, int size, double cx, double cy, double c, double s,
                      double r_edge, int found, const Tables *t) {
    double in_t, out_t, in_p, out_p;
    double r_tol = steepest_fall(tolerant, size, cx, cy, c, s, r_edge, t, &in_t, &out_t);
    double r_plain = steepest_fall(plain, size, cx, cy, c, s, r_edge, t, &in_p, &out_p);
    if (!(found && (in_t - out_t > CONTRAST || in_p - out_p > CONTRAST))) return r_edge;
    if (out_p < 0.3 * fmax(in_p, 1e-6) && in_p - out_p > CONTRAST) return r_plain;
    return r_tol;
}

/* The weighted least-squares system of one ball into a (5, 5) and b (5). */
static void normal(const double *r_edge, const uint8_t *w, const Tables *t, double *a, double *b) {
    memset(a, 0, 25 * sizeof(double));
    memset(b, 0, 5 * sizeof(double));
    for (int k = 0; k < t->n_rays; k++) {
        if (!w[k]) continue;
        const double *row = t->basis + 5 * k;
        for (int p = 0; p < 5; p++) {
            b[p] += r_edge[k] * row[p];
            for (int q = 0; q < 5; q++) a[5 * p + q] += row[p] * row[q];
        }
    }
}

/* r, dx, dy, a, b with the radius free: the 5 x 5 system (ridged) by Gaussian elimination with pivoting. */
static void solve_free(const double *a, const double *b, double *out) {
    double m[25], v[5];
    memcpy(m, a, sizeof m);
    memcpy(v, b, sizeof v);
    for (int i = 0; i < 5; i++) m[6 * i] += RIDGE;
    for (int col = 0; col < 5; col++) {
        int piv = col;
        for (int r = col + 1; r < 5; r++)
            if (fabs(m[5 * r + col]) > fabs(m[5 * piv + col])) piv = r;
        if (piv != col) {
            for (int c = 0; c < 5; c++) {
                double tmp = m[5 * col + c];
                m[5 * col + c] = m[5 * piv + c];
                m[5 * piv + c] = tmp;
            }
            double tmp = v[col];
            v[col] = v[piv];
            v[piv] = tmp;
        }
        for (int r = col + 1; r < 5; r++) {
            double f = m[5 * r + col] / m[5 * col + col];
            for (int c = col; c < 5; c++) m[5 * r + c] -= f * m[5 * col + c];
            v[r] -= f * v[col];
        }
    }
    for (int i = 4; i >= 0; i--) {
        double sum = v[i];
        for (int c = i + 1; c < 5; c++) sum -= m[5 * i + c] * out[c];
        out[i] = sum / m[6 * i];
    }
}

/* The radius held at radius, the shift fitted alone (the free system's (dx, dy) block with the held radius moved
 * to the right-hand side), the harmonics zero. */
static void solve_fixed(const double *a, const double *b, double radius, double *out) {
    double a11 = a[6] + RIDGE, a12 = a[7], a22 = a[12] + RIDGE;
    double b1 = b[1] - radius * a[1], b2 = b[2] - radius * a[2];
    double det = a11 * a22 - a12 * a12;
    out[0] = radius;
    out[1] = (a22 * b1 - a12 * b2) / det;
    out[2] = (a11 * b2 - a12 * b1) / det;
    out[3] = out[4] = 0.0;
}

/* The median of v[0..n) (n > 0), sorting it in place: n is a frame's few balls. */
static double median(double *v, int n) {
    for (int i = 1; i < n; i++) {
        double x = v[i];
        int j = i - 1;
        for (; j >= 0 && v[j] > x; j--) v[j + 1] = v[j];
        v[j + 1] = x;
    }
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef struct {
    int n, size, iterations, n_given;
    const float *masks, *tolerant, *plain;
    const double *origins, *centres, *radii, *given;
    double *c, *radius, *elong, *ratios;
    uint8_t *found, *balanced;
} Call;

/* The rounds; work holds (n * (K + 36)) doubles. */
static void rounds(const Call *call, const Tables *t, double *work) {
    int n = call->n, size = call->size, nr = t->n_rays;
    size_t area = (size_t)size * size;
    double *r_edge = work, *a = r_edge + (size_t)n * nr, *b = a + 25 * n, *free_ = b + 5 * n, *share = free_ + 5 * n;
    double sol[5];
    memcpy(call->c, call->centres, 2 * n * sizeof(double));
    memcpy(call->radius, call->radii, n * sizeof(double));
    memset(call->elong, 0, n * sizeof(double));
    memset(call->found, 0, (size_t)n * nr);
    memset(call->balanced, 0, n);
    for (int it = 0; it < call->iterations; it++) {
        for (int i = 0; i < n; i++) {
            double lx = call->c[2 * i] - call->origins[2 * i], ly = call->c[2 * i + 1] - call->origins[2 * i + 1];
            uint8_t *found = call->found + (size_t)i * nr;
            for (int k = 0; k < nr; k++) {
                int ok;
                double e = edge(call->masks + i * area, size, lx, ly, t->cos[k], t->sin[k], call->radii[i], t, &ok);
                r_edge[i * nr + k] = refined(call->tolerant + i * area, call->plain + i * area, size, lx, ly,
                                             t->cos[k], t->sin[k], e, ok, t);
                found[k] = (uint8_t)ok;
            }
            double *ai = a + 25 * i, *bi = b + 5 * i;
            normal(r_edge + i * nr, found, t, ai, bi);
            double count = ai[0], norm = count > 1.0 ? count : 1.0;
            call->balanced[i] = count >= BALANCED_SHARE * nr && fabs(ai[1]) / norm < BALANCED_COV &&
                                fabs(ai[2]) / norm < BALANCED_COV;
            solve_free(ai, bi, free_ + 5 * i);
        }
        double ratio;
        if (call->n_given == call->iterations) {
            ratio = call->given[it];
        } else {
            int nb = 0;
            for (int i = 0; i < n; i++)
                if (call->balanced[i]) share[nb++] = free_[5 * i] / call->radii[i];
            ratio = nb ? median(share, nb) : NO_BALANCED_RATIO;
        }
        call->ratios[it] = ratio;
        for (int i = 0; i < n; i++) {
            double *ai = a + 25 * i, *bi = b + 5 * i, held = call->radii[i] * ratio;
            uint8_t *found = call->found + (size_t)i * nr;
            if (call->balanced[i]) memcpy(sol, free_ + 5 * i, sizeof sol);
            else solve_fixed(ai, bi, held, sol);
            for (int k = 0; k < nr; k++) {
                double pred = 0.0;
                for (int p = 0; p < 5; p++) pred += sol[p] * t->basis[5 * k + p];
                found[k] = found[k] && fabs(r_edge[i * nr + k] - pred) < OUTLIER_PX;
            }
            normal(r_edge + i * nr, found, t, ai, bi);
            if (call->balanced[i]) solve_free(ai, bi, sol);
            else solve_fixed(ai, bi, held, sol);
            if (ai[0] >= 5) {
                /* A wild shift means the guess was not a ball: keep it bounded, the score will say the rest. */
                double bound = 0.5 * call->radii[i];
                call->c[2 * i] += clampd(sol[1], -bound, bound);
                call->c[2 * i + 1] += clampd(sol[2], -bound, bound);
                call->radius[i] = sol[0];
                call->elong[i] = call->balanced[i] ? 2.0 * hypot(sol[3], sol[4]) : 0.0;
            } else {
                call->radius[i] = call->radii[i];
                call->elong[i] = 0.0;
            }
        }
    }
}

/* A buffer's byte length checked against what the call says it holds. */
static int sized(const Py_buffer *buf, Py_ssize_t items, Py_ssize_t item_size, const char *name) {
    if (buf->len != items * item_size) {
        PyErr_Format(PyExc_ValueError, "fit_rounds: %s holds %zd bytes, not %zd", name, buf->len, items * item_size);
        return 0;
    }
    return 1;
}

static PyObject *fit_rounds(PyObject *self, PyObject *args) {
    (void)self;
    enum { N_BUF = 18 };
    Py_buffer bufs[N_BUF];
    memset(bufs, 0, sizeof bufs); /* ParseTuple fills them in order up to the first it fails on */
    Call call;
    Tables t;
    PyObject *result = NULL;
    double *work = NULL;
    /* In: masks, tolerant, plain, origins, centres, radii, given; cos, sin, basis, band, offsets.
     * Out: centres, radius, elong, found, balanced, ratios. Then n, size, iterations, step, below_run. */
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*y*y*y*y*y*w*w*w*w*w*w*iiidi:fit_rounds", &bufs[0], &bufs[1],
                          &bufs[2], &bufs[3], &bufs[4], &bufs[5], &bufs[6], &bufs[7], &bufs[8], &bufs[9],
                          &bufs[10], &bufs[11], &bufs[12], &bufs[13], &bufs[14], &bufs[15], &bufs[16], &bufs[17],
                          &call.n, &call.size, &call.iterations, &t.step, &t.below_run))
        goto done;
    Py_ssize_t n = call.n, area = (Py_ssize_t)call.size * call.size;
    t.n_rays = (int)(bufs[7].len / sizeof(double));
    t.n_band = (int)(bufs[10].len / sizeof(double));
    t.n_offsets = (int)(bufs[11].len / sizeof(double));
    call.n_given = (int)(bufs[6].len / sizeof(double));
    if (n < 0 || call.size < 2 || call.iterations < 0 || t.n_rays < 1 || t.below_run < 1 ||
        t.n_band <= t.below_run || t.n_band > MAX_LEN || t.n_offsets < 5 || t.n_offsets > MAX_LEN) {
        PyErr_SetString(PyExc_ValueError, "fit_rounds: sizes out of range");
        goto done;
    }
    if (!sized(&bufs[0], n * area, 4, "masks") || !sized(&bufs[1], n * area, 4, "tolerant") ||
        !sized(&bufs[2], n * area, 4, "plain") || !sized(&bufs[3], 2 * n, 8, "origins") ||
        !sized(&bufs[4], 2 * n, 8, "centres") || !sized(&bufs[5], n, 8, "radii") ||
        !sized(&bufs[8], t.n_rays, 8, "sin") || !sized(&bufs[9], 5 * t.n_rays, 8, "basis") ||
        !sized(&bufs[12], 2 * n, 8, "out centres") || !sized(&bufs[13], n, 8, "out radius") ||
        !sized(&bufs[14], n, 8, "out elong") || !sized(&bufs[15], n * t.n_rays, 1, "out found") ||
        !sized(&bufs[16], n, 1, "out balanced") || !sized(&bufs[17], call.iterations, 8, "out ratios"))
        goto done;
    work = PyMem_RawMalloc(((size_t)n * (t.n_rays + 36) + 1) * sizeof(double));
    if (!work) {
        PyErr_NoMemory();
        goto done;
    }
    call.masks = bufs[0].buf;
    call.tolerant = bufs[1].buf;
    call.plain = bufs[2].buf;
    call.origins = bufs[3].buf;
    call.centres = bufs[4].buf;
    call.radii = bufs[5].buf;
    call.given = bufs[6].buf;
    t.cos = bufs[7].buf;
    t.sin = bufs[8].buf;
    t.basis = bufs[9].buf;
    t.band = bufs[10].buf;
    t.offsets = bufs[11].buf;
    call.c = bufs[12].buf;
    call.radius = bufs[13].buf;
    call.elong = bufs[14].buf;
    call.found = bufs[15].buf;
    call.balanced = bufs[16].buf;
    call.ratios = bufs[17].buf;
    Py_BEGIN_ALLOW_THREADS
    rounds(&call, &t, work);
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
done:
    PyMem_RawFree(work);
    for (int i = 0; i < N_BUF; i++)
        if (bufs[i].obj) PyBuffer_Release(&bufs[i]);
    return result;
}

static PyMethodDef methods[] = {
    {"fit_rounds", fit_rounds, METH_VARARGS,
     "The ray fit's rounds into the output buffers: see vision/ray_kernel.py, which is the way to call it."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, .m_name = "_ray_kernel", .m_doc = "The ray fit's rounds in C.", .m_size = -1, .m_methods = methods};

PyMODINIT_FUNC PyInit__ray_kernel(void) { return PyModule_Create(&module); }
