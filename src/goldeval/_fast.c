/*
 * goldeval._fast: the openscribe token rule and the multiset overlap of two texts, in one pass each.
 *
 * overlap_counts(prediction: str, reference: str) -> (n_prediction, n_reference, n_overlap)
 * shared_marks(prediction: str, reference: str) -> (list[int], list[int]) | None   (the HTML report's marks)
 *
 * Same definition as goldeval.tokens.OPENSCRIBE + goldeval.overlap.overlap_of_tokens (the pure-Python reference,
 * which stays the definition; tests check the two agree): text.lower(), then tokens are the leftmost-greedy matches
 * of [a-z0-9]+(?:[.'/-][a-z0-9]+)*, and the overlap is the size of the multiset intersection.
 * ASCII text is lowercased here; any other text is lowercased by str.lower() (so that e.g. KELVIN SIGN becomes 'k'
 * exactly as in Python) and its non-ASCII code points, which can never be part of a token, act as separators.
 *
 * The data-answer judge's column pairing (goldeval.answers.pairing; the NumPy code there stays the definition and
 * runs where this module is missing; tests/unit/test_fast_paths.py checks the two agree):
 *
 * sorted_contained(ps, lo, hi, weight, rel_tol) -> int
 * common_min_count(a, b) -> int
 *
 * and the typing of its cells (goldeval.answers.values.make_column, same checks):
 *
 * fill_numbers(cells, out) -> int
 * columns_of(rows, width) -> list[list] | None
 *
 * and the row grouping of its matching (goldeval.answers.matching.hash_groups, same arithmetic):
 *
 * row_hashes(keys, out) -> None
 * rows_equal(keys, rep) -> bool
 *
 * and, by one hash table of the rows instead of a sort (the same pairs and groups as the NumPy code there):
 *
 * pair_rows(gkeys, pkeys, gnum, pnum, a, b) -> int   (matching.stack_pairs)
 * row_ids(gkeys, pkeys, out) -> int             (matching.hash_groups of the two tables' rows stacked)
 * agreement_counts(g, p, ga, pb, out) -> None   (table._pair_by_row_signatures: agreeing cells per column pair)
 * number_facts(v) -> (int, bool, int | None)    (rows._number_facts: NULLs, whole numbers, their sum)
 *
 * and the decimals a binary float is written with (goldeval.answers.values.float_decimals, same rounding):
 *
 * float_decimals(x, out) -> None
 *
 * and the tolerance rule over whole tables (goldeval.answers.numbers.numbers_close, same arithmetic):
 *
 * all_close(g, p, half, rel) -> bool
 *
 * and the paired bootstrap's resampled means (goldeval.resample.resample_means, the same draws and the same
 * additions in the same order, so the same bits):
 *
 * resample_means(d, key, key_retry, first, out[, kernel]) -> None; resample_kernels() -> tuple[str, ...]
 *
 * and token F1's plain JSONL rows, read, scored and written in one pass (goldeval.freetext.scorer, whose Python path
 * stays the definition and the fallback, line by line):
 *
 * f1_lines(block, pos, lineno, id_key, pred_key, ref_key, emit) -> (pos, lineno, n, body, records, ids, sums)
 *
 * Arguments are C-contiguous buffers (NumPy arrays): float64, and int64 for weight (or None). Compiled with
 * -ffp-contract=off: every float expression rounds as NumPy's elementwise operations do.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <math.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

typedef struct { const unsigned char *ptr; Py_ssize_t len; uint64_t hash; Py_ssize_t count; } Slot;

static inline int is_alnum(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
static inline int is_joiner(unsigned char c) { return c == '.' || c == '\'' || c == '/' || c == '-'; }

/* Lowercased ASCII bytes of s (non-ASCII code points become ' '), malloc'd; length in *n. NULL on error. */
static unsigned char *lowered_bytes(PyObject *s, Py_ssize_t *n) {
    if (PyUnicode_IS_ASCII(s)) {
        Py_ssize_t len = PyUnicode_GET_LENGTH(s);
        const unsigned char *src = (const unsigned char *)PyUnicode_DATA(s);
        unsigned char *buf = (unsigned char *)PyMem_Malloc(len + 1);
        if (!buf) { PyErr_NoMemory(); return NULL; }
        for (Py_ssize_t i = 0; i < len; i++) {
            unsigned char c = src[i];
            buf[i] = (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c;
        }
        *n = len;
        return buf;
    }
    PyObject *low = PyObject_CallMethod(s, "lower", NULL);
    if (!low) return NULL;
    Py_ssize_t len = PyUnicode_GET_LENGTH(low);
    int kind = PyUnicode_KIND(low);
    const void *data = PyUnicode_DATA(low);
    unsigned char *buf = (unsigned char *)PyMem_Malloc(len + 1);
    if (!buf) { Py_DECREF(low); PyErr_NoMemory(); return NULL; }
    for (Py_ssize_t i = 0; i < len; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        buf[i] = c < 128 ? (unsigned char)c : (unsigned char)' ';
    }
    Py_DECREF(low);
    *n = len;
    return buf;
}

/* Next token in buf[*pos..n): returns 1 and sets *start/*len, or 0 at the end. */
static inline int next_token(const unsigned char *buf, Py_ssize_t n, Py_ssize_t *pos, Py_ssize_t *start, Py_ssize_t *len) {
    Py_ssize_t i = *pos;
    while (i < n && !is_alnum(buf[i])) i++;
    if (i >= n) { *pos = n; return 0; }
    Py_ssize_t s = i;
    while (i < n && is_alnum(buf[i])) i++;
    while (i + 1 < n && is_joiner(buf[i]) && is_alnum(buf[i + 1])) {
        i += 2;
        while (i < n && is_alnum(buf[i])) i++;
    }
    *start = s; *len = i - s; *pos = i;
    return 1;
}

static inline uint64_t fnv1a(const unsigned char *p, Py_ssize_t len) {
    uint64_t h = 1469598103934665603ULL;
    for (Py_ssize_t i = 0; i < len; i++) { h ^= p[i]; h *= 1099511628211ULL; }
    return h;
}

static PyObject *overlap_counts(PyObject *self, PyObject *args) {
    PyObject *pred, *ref;
    if (!PyArg_ParseTuple(args, "UU:overlap_counts", &pred, &ref)) return NULL;
    Py_ssize_t np_, nr_;
    unsigned char *pb = lowered_bytes(pred, &np_);
    if (!pb) return NULL;
    unsigned char *rb = lowered_bytes(ref, &nr_);
    if (!rb) { PyMem_Free(pb); return NULL; }

    /* Table of reference tokens: capacity a power of two >= 2 * (upper bound on token count) */
    Py_ssize_t bound = nr_ / 2 + 2;
    size_t cap = 16;
    while ((Py_ssize_t)cap < 2 * bound) cap <<= 1;
    Slot *table = (Slot *)PyMem_Calloc(cap, sizeof(Slot));
    if (!table) { PyMem_Free(pb); PyMem_Free(rb); return PyErr_NoMemory(); }
    size_t mask = cap - 1;

    Py_ssize_t pos = 0, st, ln, n_ref = 0, n_pred = 0, n_overlap = 0;
    while (next_token(rb, nr_, &pos, &st, &ln)) {
        n_ref++;
        uint64_t h = fnv1a(rb + st, ln);
        size_t j = (size_t)h & mask;
        for (;;) {
            Slot *sl = &table[j];
            if (sl->ptr == NULL) { sl->ptr = rb + st; sl->len = ln; sl->hash = h; sl->count = 1; break; }
            if (sl->hash == h && sl->len == ln && memcmp(sl->ptr, rb + st, ln) == 0) { sl->count++; break; }
            j = (j + 1) & mask;
        }
    }
    pos = 0;
    while (next_token(pb, np_, &pos, &st, &ln)) {
        n_pred++;
        if (n_ref == 0) continue;
        uint64_t h = fnv1a(pb + st, ln);
        size_t j = (size_t)h & mask;
        for (;;) {
            Slot *sl = &table[j];
            if (sl->ptr == NULL) break;
            if (sl->hash == h && sl->len == ln && memcmp(sl->ptr, pb + st, ln) == 0) {
                if (sl->count > 0) { sl->count--; n_overlap++; }
                break;
            }
            j = (j + 1) & mask;
        }
    }
    PyMem_Free(table);
    PyMem_Free(pb);
    PyMem_Free(rb);
    return Py_BuildValue("(nnn)", n_pred, n_ref, n_overlap);
}

/*
 * shared_marks(prediction: str, reference: str) -> (list[int], list[int]) | None
 *
 * For two ASCII texts, the shared-token marks of goldeval.report.model.shared_marks under the openscribe rule (the
 * pure-Python function stays the definition; a property test checks the two agree): in each text the first
 * min(count here, count there) occurrences of each token are marked (= its first "count there" occurrences), marks
 * of neighbouring tokens merge into one (in ASCII text every letter and digit is in a token, so nothing readable
 * stands between neighbours), and each text's marks come as [gap, length, gap, length, ...], each gap from the
 * end of the previous mark. None when either text is not ASCII (offsets in the lowered text may then differ).
 */
typedef struct { const unsigned char *ptr; Py_ssize_t len; uint64_t hash; Py_ssize_t left[2]; } MarkSlot;

static MarkSlot *mark_slot(MarkSlot *table, size_t mask, const unsigned char *p, Py_ssize_t len) {
    uint64_t h = fnv1a(p, len);
    size_t j = (size_t)h & mask;
    for (;;) {
        MarkSlot *sl = &table[j];
        if (sl->ptr == NULL) { sl->ptr = p; sl->len = len; sl->hash = h; return sl; }
        if (sl->hash == h && sl->len == len && memcmp(sl->ptr, p, len) == 0) return sl;
        j = (j + 1) & mask;
    }
}

/* Tokens of buf: starts/ends and slots (each slot's left[side] counts this text's tokens). Returns the count. */
static Py_ssize_t mark_tokens(const unsigned char *buf, Py_ssize_t n, MarkSlot *table, size_t mask, int side,
                              Py_ssize_t *starts, Py_ssize_t *ends, MarkSlot **slots) {
    Py_ssize_t pos = 0, st, ln, k = 0;
    while (next_token(buf, n, &pos, &st, &ln)) {
        MarkSlot *sl = mark_slot(table, mask, buf + st, ln);
        sl->left[side]++;
        starts[k] = st; ends[k] = st + ln; slots[k] = sl; k++;
    }
    return k;
}

/* The marks of one text, whose budgets are the other text's counts (left[other]). A new list, or NULL. */
static PyObject *marks_list(Py_ssize_t k, const Py_ssize_t *starts, const Py_ssize_t *ends, MarkSlot **slots, int other,
                            Py_ssize_t *runs) {
    Py_ssize_t n_runs = 0, prev_i = -2;
    for (Py_ssize_t i = 0; i < k; i++) {
        MarkSlot *sl = slots[i];
        if (sl->left[other] <= 0) continue;
        sl->left[other]--;
        if (prev_i == i - 1) runs[2 * n_runs - 1] = ends[i];
        else { runs[2 * n_runs] = starts[i]; runs[2 * n_runs + 1] = ends[i]; n_runs++; }
        prev_i = i;
    }
    PyObject *out = PyList_New(2 * n_runs);
    if (!out) return NULL;
    Py_ssize_t prev = 0;
    for (Py_ssize_t r = 0; r < n_runs; r++) {
        PyObject *gap = PyLong_FromSsize_t(runs[2 * r] - prev);
        PyObject *len = PyLong_FromSsize_t(runs[2 * r + 1] - runs[2 * r]);
        if (!gap || !len) { Py_XDECREF(gap); Py_XDECREF(len); Py_DECREF(out); return NULL; }
        PyList_SET_ITEM(out, 2 * r, gap);
        PyList_SET_ITEM(out, 2 * r + 1, len);
        prev = runs[2 * r + 1];
    }
    return out;
}

static PyObject *shared_marks(PyObject *self, PyObject *args) {
    PyObject *pred, *ref;
    if (!PyArg_ParseTuple(args, "UU:shared_marks", &pred, &ref)) return NULL;
    if (!PyUnicode_IS_ASCII(pred) || !PyUnicode_IS_ASCII(ref)) Py_RETURN_NONE;
    PyObject *result = NULL, *a = NULL, *b = NULL;
    Py_ssize_t np_, nr_;
    unsigned char *pb = lowered_bytes(pred, &np_), *rb = NULL;
    MarkSlot *table = NULL;
    Py_ssize_t *pos = NULL;
    MarkSlot **slots = NULL;
    if (!pb) return NULL;
    rb = lowered_bytes(ref, &nr_);
    if (!rb) goto done;
    /* at most n/2 + 1 tokens in n characters (a token and a separator at least, but the last) */
    Py_ssize_t bp = np_ / 2 + 1, br = nr_ / 2 + 1;
    size_t cap = 16;
    while ((Py_ssize_t)cap < 2 * (bp + br)) cap <<= 1;
    table = (MarkSlot *)PyMem_Calloc(cap, sizeof(MarkSlot));
    /* starts, ends and runs (2 per token) of both texts */
    pos = (Py_ssize_t *)PyMem_Malloc(sizeof(Py_ssize_t) * 4 * (bp + br));
    slots = (MarkSlot **)PyMem_Malloc(sizeof(MarkSlot *) * (bp + br));
    if (!table || !pos || !slots) { PyErr_NoMemory(); goto done; }
    Py_ssize_t *ps = pos, *pe = pos + bp, *rs = pos + 2 * bp, *re_ = pos + 2 * bp + br, *runs = pos + 2 * (bp + br);
    Py_ssize_t kp = mark_tokens(pb, np_, table, cap - 1, 0, ps, pe, slots);
    Py_ssize_t kr = mark_tokens(rb, nr_, table, cap - 1, 1, rs, re_, slots + bp);
    a = marks_list(kp, ps, pe, slots, 1, runs);
    if (!a) goto done;
    b = marks_list(kr, rs, re_, slots + bp, 0, runs);
    if (!b) goto done;
    result = PyTuple_Pack(2, a, b);
done:
    Py_XDECREF(a);
    Py_XDECREF(b);
    PyMem_Free(slots);
    PyMem_Free(pos);
    PyMem_Free(table);
    PyMem_Free(rb);
    PyMem_Free(pb);
    return result;
}

/* ---- the column pairing's containment shares (goldeval.answers.pairing) ---------------------------------------- */

/* A C-contiguous 1-D buffer of 8-byte items whose format ends in one of *codes* ("d" float64; "lq" int64). */
static int get_buffer(PyObject *o, Py_buffer *v, const char *codes, const char *what) {
    if (PyObject_GetBuffer(o, v, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return -1;
    const char *f = v->format ? v->format : "B";
    size_t fl = strlen(f);
    if (v->itemsize != 8 || v->ndim > 1 || fl == 0 || strchr(codes, f[fl - 1]) == NULL ||
        (fl == 2 && strchr("@=<", f[0]) == NULL) || fl > 2) {
        PyBuffer_Release(v);
        PyErr_Format(PyExc_TypeError, "%s must be a contiguous 1-D %s array", what, codes[0] == 'd' ? "float64" : "int64");
        return -1;
    }
    return 0;
}

/* NumPy's order of float64 for sorting and searchsorted: NaN after everything (a < b, or b NaN and a not). */
static inline int f64_less(double a, double b) { return a < b || (b != b && a == a); }

/* The first index i in [0, m) with !less(ps[i], key) (m if none): np.searchsorted(ps, key, side="left") on a
 * sorted ps. Gallops from *hint* (the previous answer), so sorted keys cost O(log gap) each. */
static inline Py_ssize_t lower_bound(const double *ps, Py_ssize_t m, double key, Py_ssize_t hint) {
    Py_ssize_t lo, hi, probe, step = 1;
    if (hint > m) hint = m;
    if (hint == 0 || f64_less(ps[hint - 1], key)) {
        /* the answer is >= hint */
        lo = hint;
        probe = hint;
        while (probe < m && f64_less(ps[probe], key)) { lo = probe + 1; probe = lo + step; step <<= 1; }
        hi = probe < m ? probe : m;
    } else {
        /* ps[hint - 1] >= key: the answer is <= hint - 1 */
        hi = hint - 1;
        probe = hi - 1;
        while (probe >= 0 && !f64_less(ps[probe], key)) { hi = probe; probe = hi - step; step <<= 1; }
        lo = probe >= 0 ? probe + 1 : 0;
    }
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (f64_less(ps[mid], key)) lo = mid + 1; else hi = mid;
    }
    return lo;
}

/*
 * sorted_contained(ps, lo, hi, weight, rel_tol) -> int
 *
 * For each needle i: c = the first value of the sorted ps not below lo[i]; the needle is found when c exists and
 * c <= hi[i] + rel_tol * |c|. Returns the number found (the sum of their weights when weight is not None). The
 * same as, in NumPy (goldeval.answers.pairing._numeric_containment):
 *     idx = np.searchsorted(ps, lo, side="left"); cand = ps[np.minimum(idx, ps.size - 1)]
 *     ok = (idx < ps.size) & (cand <= hi + rel_tol * np.abs(cand)); ok.sum() or weight[ok].sum()
 */
static PyObject *sorted_contained(PyObject *self, PyObject *args) {
    PyObject *ps_o, *lo_o, *hi_o, *w_o;
    double rel;
    if (!PyArg_ParseTuple(args, "OOOOd:sorted_contained", &ps_o, &lo_o, &hi_o, &w_o, &rel)) return NULL;
    Py_buffer ps, lo, hi, w;
    int has_w = w_o != Py_None;
    if (get_buffer(ps_o, &ps, "d", "ps") < 0) return NULL;
    if (get_buffer(lo_o, &lo, "d", "lo") < 0) { PyBuffer_Release(&ps); return NULL; }
    if (get_buffer(hi_o, &hi, "d", "hi") < 0) { PyBuffer_Release(&ps); PyBuffer_Release(&lo); return NULL; }
    if (has_w && get_buffer(w_o, &w, "lq", "weight") < 0) {
        PyBuffer_Release(&ps); PyBuffer_Release(&lo); PyBuffer_Release(&hi); return NULL;
    }
    Py_ssize_t m = ps.len / 8, n = lo.len / 8;
    PyObject *result = NULL;
    if (hi.len / 8 != n || (has_w && w.len / 8 != n)) {
        PyErr_SetString(PyExc_ValueError, "lo, hi and weight must have the same length");
        goto done;
    }
    {
        const double *p = (const double *)ps.buf, *l = (const double *)lo.buf, *h = (const double *)hi.buf;
        const int64_t *wt = has_w ? (const int64_t *)w.buf : NULL;
        int64_t found = 0;
        Py_ssize_t idx = 0;
        if (m > 0) {
            for (Py_ssize_t i = 0; i < n; i++) {
                idx = lower_bound(p, m, l[i], idx);
                if (idx < m) {
                    double c = p[idx];
                    double lim = h[i] + rel * fabs(c);
                    if (c <= lim) found += wt ? wt[i] : 1;
                }
            }
        }
        result = PyLong_FromLongLong((long long)found);
    }
done:
    PyBuffer_Release(&ps); PyBuffer_Release(&lo); PyBuffer_Release(&hi);
    if (has_w) PyBuffer_Release(&w);
    return result;
}

/*
 * common_min_count(a, b) -> int
 *
 * a, b: sorted float64 without NaN. The sum, over the distinct values both hold (== equality, so -0.0 is 0.0), of
 * the smaller of their two counts: the multiset intersection's size. The same as, in NumPy
 * (goldeval.answers.pairing.multiset_share):
 *     ua, ca = np.unique(a, return_counts=True); ub, cb = np.unique(b, return_counts=True)
 *     ib = np.minimum(np.searchsorted(ub, ua), ub.size - 1); common = ub[ib] == ua
 *     np.minimum(ca[common], cb[ib[common]]).sum()
 */
static PyObject *common_min_count(PyObject *self, PyObject *args) {
    PyObject *a_o, *b_o;
    if (!PyArg_ParseTuple(args, "OO:common_min_count", &a_o, &b_o)) return NULL;
    Py_buffer a, b;
    if (get_buffer(a_o, &a, "d", "a") < 0) return NULL;
    if (get_buffer(b_o, &b, "d", "b") < 0) { PyBuffer_Release(&a); return NULL; }
    const double *x = (const double *)a.buf, *y = (const double *)b.buf;
    Py_ssize_t na = a.len / 8, nb = b.len / 8, i = 0, j = 0;
    int64_t found = 0;
    while (i < na && j < nb) {
        double v = x[i], u = y[j];
        if (v < u) { while (i < na && x[i] == v) i++; continue; }
        if (u < v) { while (j < nb && y[j] == u) j++; continue; }
        Py_ssize_t ci = 0, cj = 0;
        while (i < na && x[i] == v) { i++; ci++; }
        while (j < nb && y[j] == v) { j++; cj++; }
        found += ci < cj ? ci : cj;
    }
    PyBuffer_Release(&a);
    PyBuffer_Release(&b);
    return PyLong_FromLongLong((long long)found);
}

/*
 * fill_numbers(cells, out) -> int
 *
 * cells: a list or tuple; out: a writable float64 buffer of the same length. When every cell is exactly an int, a
 * float or None, writes np.array(cells, dtype=float) into out (None as NaN) and returns the flags 1 (a float cell
 * is present) | 2 (an int of magnitude 2**53 or more is present: its float is not exact, the caller types the
 * column another way) | 4 (an int cell is present) | 8 (a None cell is present). Returns -1, out partly written,
 * at the first other cell (bool, str, Decimal, ...).
 */
static PyObject *fill_numbers(PyObject *self, PyObject *args) {
    PyObject *cells, *out_o;
    if (!PyArg_ParseTuple(args, "OO:fill_numbers", &cells, &out_o)) return NULL;
    if (!PyList_Check(cells) && !PyTuple_Check(cells)) {
        PyErr_SetString(PyExc_TypeError, "cells must be a list or a tuple");
        return NULL;
    }
    Py_buffer out;
    if (PyObject_GetBuffer(out_o, &out, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE) < 0) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(cells);
    if (out.itemsize != 8 || !out.format || strcmp(out.format, "d") != 0 || out.len / 8 != n) {
        PyBuffer_Release(&out);
        PyErr_SetString(PyExc_TypeError, "out must be a writable float64 array as long as cells");
        return NULL;
    }
    PyObject **items = PySequence_Fast_ITEMS(cells);
    double *o = (double *)out.buf;
    long flags = 0;
    const long long exact = 9007199254740992LL; /* 2**53 */
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *v = items[i];
        if (PyFloat_CheckExact(v)) {
            o[i] = PyFloat_AS_DOUBLE(v);
            flags |= 1;
        } else if (PyLong_CheckExact(v)) {
            int overflow = 0;
            flags |= 4;
            long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
            if (overflow || x >= exact || x <= -exact) {
                flags |= 2;
                o[i] = overflow ? (overflow > 0 ? INFINITY : -INFINITY) : (double)x; /* not read: the column is typed again */
            } else {
                o[i] = (double)x;
            }
        } else if (v == Py_None) {
            o[i] = NAN;
            flags |= 8;
        } else {
            flags = -1;
            break;
        }
    }
    PyBuffer_Release(&out);
    return PyLong_FromLong(flags);
}

/*
 * columns_of(rows, width) -> list[list] | None
 *
 * rows: a list of rows, each exactly a list or a tuple of *width* cells. Returns the *width* columns as new lists
 * (the same cell objects): [list(c) for c in zip(*rows)], without the one iterator per row that zip(*rows) makes
 * (10,000 rows are 10,000 objects the garbage collector tracks). None when a row is not exactly a list or a tuple
 * or has another length, or when rows is empty (the caller then takes its general path).
 */
static PyObject *columns_of(PyObject *self, PyObject *args) {
    PyObject *rows;
    Py_ssize_t width;
    if (!PyArg_ParseTuple(args, "O!n:columns_of", &PyList_Type, &rows, &width)) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(rows);
    if (n == 0 || width <= 0) Py_RETURN_NONE;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *r = PyList_GET_ITEM(rows, i);
        if (!(PyList_CheckExact(r) || PyTuple_CheckExact(r)) || PySequence_Fast_GET_SIZE(r) != width) Py_RETURN_NONE;
    }
    PyObject *out = PyList_New(width);
    if (!out) return NULL;
    for (Py_ssize_t j = 0; j < width; j++) {
        PyObject *col = PyList_New(n);
        if (!col) { Py_DECREF(out); return NULL; }
        PyList_SET_ITEM(out, j, col);
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject **cells = PySequence_Fast_ITEMS(PyList_GET_ITEM(rows, i));
        for (Py_ssize_t j = 0; j < width; j++) {
            PyObject *v = cells[j];
            Py_INCREF(v);
            PyList_SET_ITEM(PyList_GET_ITEM(out, j), i, v);
        }
    }
    return out;
}

/* A 2-D buffer of 8-byte integers (any strides): rows, columns and the byte strides. */
static int get_keys(PyObject *o, Py_buffer *v, Py_ssize_t *n, Py_ssize_t *k) {
    if (PyObject_GetBuffer(o, v, PyBUF_STRIDES | PyBUF_FORMAT) < 0) return -1;
    const char *f = v->format ? v->format : "B";
    size_t fl = strlen(f);
    if (v->ndim != 2 || v->itemsize != 8 || fl == 0 || fl > 2 || strchr("lqLQ", f[fl - 1]) == NULL ||
        (fl == 2 && strchr("@=<", f[0]) == NULL)) {
        PyBuffer_Release(v);
        PyErr_SetString(PyExc_TypeError, "keys must be a 2-D int64 array");
        return -1;
    }
    *n = v->shape[0];
    *k = v->shape[1];
    return 0;
}

#define KEY(v, i, j) (*(const uint64_t *)((const char *)(v).buf + (i) * (v).strides[0] + (j) * (v).strides[1]))

/*
 * row_hashes(keys, out) -> None
 *
 * keys: (n, k) int64, any layout; out: (n,) writable uint64. Writes each row's 64-bit mix, the one
 * goldeval.answers.matching.hash_groups computes column by column in NumPy:
 *     h = 0x9E3779B97F4A7C15; for each column value c: x = ((c >> 31) ^ c) * 0xBF58476D1CE4E5B9;
 *     h = (h ^ x ^ (h >> 29)) * 0x94D049BB133111EB   (uint64, wrapping)
 */
static PyObject *row_hashes(PyObject *self, PyObject *args) {
    PyObject *keys_o, *out_o;
    if (!PyArg_ParseTuple(args, "OO:row_hashes", &keys_o, &out_o)) return NULL;
    Py_buffer keys, out;
    Py_ssize_t n, k;
    if (get_keys(keys_o, &keys, &n, &k) < 0) return NULL;
    if (PyObject_GetBuffer(out_o, &out, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE) < 0) { PyBuffer_Release(&keys); return NULL; }
    const char *f = out.format ? out.format : "B";
    if (out.itemsize != 8 || out.len / 8 != n || strchr("LQ", f[strlen(f) - 1]) == NULL) {
        PyBuffer_Release(&keys); PyBuffer_Release(&out);
        PyErr_SetString(PyExc_TypeError, "out must be a writable uint64 array with one item per row");
        return NULL;
    }
    uint64_t *h = (uint64_t *)out.buf;
    for (Py_ssize_t i = 0; i < n; i++) h[i] = 0x9E3779B97F4A7C15ULL;
    for (Py_ssize_t j = 0; j < k; j++) {  /* column by column: each column is read in order */
        for (Py_ssize_t i = 0; i < n; i++) {
            uint64_t c = KEY(keys, i, j);
            uint64_t x = ((c >> 31) ^ c) * 0xBF58476D1CE4E5B9ULL;
            uint64_t t = h[i] >> 29;
            h[i] = ((h[i] ^ x) ^ t) * 0x94D049BB133111EBULL;
        }
    }
    PyBuffer_Release(&keys);
    PyBuffer_Release(&out);
    Py_RETURN_NONE;
}

/*
 * rows_equal(keys, rep) -> bool
 *
 * keys: (n, k) int64, any layout; rep: (n,) int64 row indices in [0, n). True when every row i equals row rep[i] in
 * every column: all(np.array_equal(c, c[rep]) for c in keys.T).
 */
static PyObject *rows_equal(PyObject *self, PyObject *args) {
    PyObject *keys_o, *rep_o;
    if (!PyArg_ParseTuple(args, "OO:rows_equal", &keys_o, &rep_o)) return NULL;
    Py_buffer keys, rep;
    Py_ssize_t n, k;
    if (get_keys(keys_o, &keys, &n, &k) < 0) return NULL;
    if (get_buffer(rep_o, &rep, "lq", "rep") < 0) { PyBuffer_Release(&keys); return NULL; }
    const int64_t *r = (const int64_t *)rep.buf;
    int ok = rep.len / 8 == n;
    for (Py_ssize_t i = 0; ok && i < n; i++) {
        int64_t ri = r[i];
        if (ri < 0 || ri >= n) { ok = 0; break; }
        for (Py_ssize_t j = 0; j < k; j++) {
            if (KEY(keys, i, j) != KEY(keys, ri, j)) { ok = 0; break; }
        }
    }
    PyBuffer_Release(&keys);
    PyBuffer_Release(&rep);
    return PyBool_FromLong(ok);
}

/* ---- rows by one hash table (goldeval.answers.matching.stack_pairs, hash_groups) ------------------------------- */

/* One table's rows as keys: int64 cells, then (optionally) float64 cells read as their exact keys (x + 0.0, NaN as
 * +inf: goldeval.answers.matching._exact_keys). */
typedef struct { Py_buffer ints; Py_buffer nums; int has_nums; Py_ssize_t n, ki, kn; } Rows;

#define F64(v, i, j) (*(const double *)((const char *)(v).buf + (i) * (v).strides[0] + (j) * (v).strides[1]))

static inline uint64_t num_key(double x) {
    x = x + 0.0;  /* -0.0 as 0.0 */
    if (x != x) x = INFINITY;  /* NULL meets NULL (and +inf: the tolerance test decides) */
    uint64_t u;
    memcpy(&u, &x, 8);
    return u;
}

static inline uint64_t mix_in(uint64_t h, uint64_t c) {
    uint64_t x = ((c >> 31) ^ c) * 0xBF58476D1CE4E5B9ULL;
    return ((h ^ x) ^ (h >> 29)) * 0x94D049BB133111EBULL;
}

static inline uint64_t row_mix(const Rows *r, Py_ssize_t i) {
    uint64_t h = 0x9E3779B97F4A7C15ULL;
    for (Py_ssize_t j = 0; j < r->ki; j++) h = mix_in(h, KEY(r->ints, i, j));
    for (Py_ssize_t j = 0; j < r->kn; j++) h = mix_in(h, num_key(F64(r->nums, i, j)));
    /* splitmix64's finaliser: every bit of h reaches the low bits the slot is read from (the cells' mix leaves the
     * low bits of small whole floats, whose low mantissa bits are all 0, nearly constant) */
    h ^= h >> 30;
    h *= 0xBF58476D1CE4E5B9ULL;
    h ^= h >> 27;
    h *= 0x94D049BB133111EBULL;
    return h ^ (h >> 31);
}

static inline int same_row(const Rows *a, Py_ssize_t i, const Rows *b, Py_ssize_t j) {
    for (Py_ssize_t c = 0; c < a->ki; c++)
        if (KEY(a->ints, i, c) != KEY(b->ints, j, c)) return 0;
    for (Py_ssize_t c = 0; c < a->kn; c++)
        if (num_key(F64(a->nums, i, c)) != num_key(F64(b->nums, j, c))) return 0;
    return 1;
}

static int get_f64_2d(PyObject *o, Py_buffer *v, const char *what);

/* keys (2-D int64) and nums (None, or 2-D float64 with as many rows). */
static int get_rows(PyObject *keys, PyObject *nums, Rows *r) {
    if (get_keys(keys, &r->ints, &r->n, &r->ki) < 0) return -1;
    r->has_nums = nums != Py_None;
    r->kn = 0;
    if (r->has_nums) {
        if (get_f64_2d(nums, &r->nums, "nums") < 0) { PyBuffer_Release(&r->ints); return -1; }
        r->kn = r->nums.shape[1];
        if (r->nums.shape[0] != r->n) {
            PyBuffer_Release(&r->ints); PyBuffer_Release(&r->nums);
            PyErr_SetString(PyExc_ValueError, "keys and nums must have the same rows");
            return -1;
        }
    }
    return 0;
}

static void release_rows(Rows *r) {
    PyBuffer_Release(&r->ints);
    if (r->has_nums) PyBuffer_Release(&r->nums);
}

/* An open-addressing table of distinct rows (linear probing, at most 3/4 full): slot s holds a representative row
 * rep[s] (-1: empty; a golden row i as i, a prediction row j as n_g + j in row_ids) with the high half of its hash,
 * and one int32 value. 12 bytes a slot: the table is fresh memory each call, and its pages cost more than its probes. */
typedef struct { int32_t mask; int32_t *rep; uint32_t *tag; int32_t *val; } RowTable;

static int table_init(RowTable *t, Py_ssize_t rows) {
    Py_ssize_t size = 16;
    while (size < rows + rows / 3 + 1) size <<= 1;
    if (size > ((Py_ssize_t)1 << 30)) { PyErr_SetString(PyExc_OverflowError, "too many rows for the row table"); return -1; }
    t->mask = (int32_t)(size - 1);
    t->rep = PyMem_Malloc(size * sizeof(int32_t));
    t->tag = PyMem_Malloc(size * sizeof(uint32_t));
    t->val = PyMem_Malloc(size * sizeof(int32_t));
    if (!t->rep || !t->tag || !t->val) {
        PyMem_Free(t->rep); PyMem_Free(t->tag); PyMem_Free(t->val);
        PyErr_NoMemory();
        return -1;
    }
    memset(t->rep, 0xff, size * sizeof(int32_t));  /* every slot -1 */
    return 0;
}

static void table_free(RowTable *t) { PyMem_Free(t->rep); PyMem_Free(t->tag); PyMem_Free(t->val); }

/* The slot of row i of side *side* of the two tables *sides* (a representative r < n0 is golden row r, else
 * prediction row r - n0): its row's slot, or the empty slot where it goes (rep -1). */
static inline Py_ssize_t table_find(const RowTable *t, const Rows *sides, Py_ssize_t n0, int side, Py_ssize_t i, uint64_t h) {
    uint32_t tag = (uint32_t)(h >> 32);
    Py_ssize_t s = (Py_ssize_t)(h & (uint64_t)t->mask);
    while (t->rep[s] >= 0) {
        if (t->tag[s] == tag) {
            Py_ssize_t r = t->rep[s];
            int rs = r >= n0;
            if (same_row(&sides[side], i, &sides[rs], rs ? r - n0 : r)) return s;
        }
        s = (s + 1) & t->mask;
    }
    return s;
}

static int out_i64(PyObject *o, Py_buffer *v, Py_ssize_t n, const char *what) {
    if (PyObject_GetBuffer(o, v, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE) < 0) return -1;
    const char *f = v->format ? v->format : "B";
    if (v->itemsize != 8 || v->len / 8 != n || strchr("lq", f[strlen(f) - 1]) == NULL) {
        PyBuffer_Release(v);
        PyErr_Format(PyExc_TypeError, "%s must be a writable int64 array of %zd items", what, n);
        return -1;
    }
    return 0;
}

/*
 * pair_rows(gkeys, pkeys, gnum, pnum, a, b) -> int
 *
 * gkeys: (n_g, k), pkeys: (n_p, k) int64, any layout; gnum, pnum: None, or (n_g, m) / (n_p, m) float64 cells that
 * extend each row's key by their exact keys (x + 0.0, NaN as +inf); a, b: (n_g,) writable int64. The pairs of
 * goldeval.answers.matching.stack_pairs: among equal rows the prediction rows form a stack in their order, and each
 * golden row in turn takes the top one (the first golden row the last prediction row, the next the one before).
 * Writes golden row a[t] with prediction row b[t] for t < the returned count, a ascending.
 */
static PyObject *pair_rows(PyObject *self, PyObject *args) {
    PyObject *g_o, *p_o, *gn_o, *pn_o, *a_o, *b_o;
    if (!PyArg_ParseTuple(args, "OOOOOO:pair_rows", &g_o, &p_o, &gn_o, &pn_o, &a_o, &b_o)) return NULL;
    Rows sides[2];
    Py_buffer a, b;
    if ((gn_o == Py_None) != (pn_o == Py_None)) {
        PyErr_SetString(PyExc_ValueError, "gnum and pnum must both be given or both be None");
        return NULL;
    }
    if (get_rows(g_o, gn_o, &sides[0]) < 0) return NULL;
    if (get_rows(p_o, pn_o, &sides[1]) < 0) { release_rows(&sides[0]); return NULL; }
    Py_ssize_t ng = sides[0].n, np_ = sides[1].n;
    if (sides[0].ki != sides[1].ki || sides[0].kn != sides[1].kn) {
        release_rows(&sides[0]); release_rows(&sides[1]);
        PyErr_SetString(PyExc_ValueError, "the golden and prediction keys must have the same columns");
        return NULL;
    }
    if (out_i64(a_o, &a, ng, "a") < 0) { release_rows(&sides[0]); release_rows(&sides[1]); return NULL; }
    if (out_i64(b_o, &b, ng, "b") < 0) { release_rows(&sides[0]); release_rows(&sides[1]); PyBuffer_Release(&a); return NULL; }
    PyObject *result = NULL;
    RowTable t;
    int32_t *next = NULL;
    if (np_ >= ((Py_ssize_t)1 << 30)) { PyErr_SetString(PyExc_OverflowError, "too many rows for the row table"); goto done; }
    if (table_init(&t, np_) < 0) goto done;
    next = PyMem_Malloc((np_ ? np_ : 1) * sizeof(int32_t));
    if (!next) { PyErr_NoMemory(); table_free(&t); goto done; }
    {
        /* Only prediction rows are stored (as j, side 1 with n0 = 0). val[s]: the top of slot s's stack (-1 when
         * empty); next[j]: the row under prediction row j. */
        for (Py_ssize_t j = 0; j < np_; j++) {
            uint64_t h = row_mix(&sides[1], j);
            Py_ssize_t s = table_find(&t, sides, 0, 1, j, h);
            if (t.rep[s] < 0) { t.rep[s] = (int32_t)j; t.tag[s] = (uint32_t)(h >> 32); next[j] = -1; }
            else next[j] = t.val[s];
            t.val[s] = (int32_t)j;
        }
        int64_t *ao = (int64_t *)a.buf, *bo = (int64_t *)b.buf;
        Py_ssize_t c = 0;
        for (Py_ssize_t i = 0; np_ && i < ng; i++) {
            uint64_t h = row_mix(&sides[0], i);
            Py_ssize_t s = table_find(&t, sides, 0, 0, i, h);
            if (t.rep[s] < 0 || t.val[s] < 0) continue;
            ao[c] = i;
            bo[c] = t.val[s];
            t.val[s] = next[t.val[s]];
            c++;
        }
        result = PyLong_FromSsize_t(c);
    }
    PyMem_Free(next);
    table_free(&t);
done:
    release_rows(&sides[0]); release_rows(&sides[1]); PyBuffer_Release(&a); PyBuffer_Release(&b);
    return result;
}

/*
 * row_ids(gkeys, pkeys, out) -> int
 *
 * gkeys: (n_g, k), pkeys: (n_p, k) int64, any layout; out: (n_g + n_p,) writable int64. The rows of both tables,
 * golden first, numbered by group: equal rows the same id, ids 0, 1, ... in the order of their first row (the
 * partition goldeval.answers.matching.hash_groups gives of the two stacked). Returns the number of ids.
 */
static PyObject *row_ids(PyObject *self, PyObject *args) {
    PyObject *g_o, *p_o, *out_o;
    if (!PyArg_ParseTuple(args, "OOO:row_ids", &g_o, &p_o, &out_o)) return NULL;
    Rows sides[2];
    Py_buffer out;
    if (get_rows(g_o, Py_None, &sides[0]) < 0) return NULL;
    if (get_rows(p_o, Py_None, &sides[1]) < 0) { release_rows(&sides[0]); return NULL; }
    Py_ssize_t n[2] = {sides[0].n, sides[1].n};
    if (sides[0].ki != sides[1].ki) {
        release_rows(&sides[0]); release_rows(&sides[1]);
        PyErr_SetString(PyExc_ValueError, "gkeys and pkeys must have the same number of columns");
        return NULL;
    }
    if (out_i64(out_o, &out, n[0] + n[1], "out") < 0) { release_rows(&sides[0]); release_rows(&sides[1]); return NULL; }
    PyObject *result = NULL;
    RowTable t;
    if (n[0] + n[1] >= ((Py_ssize_t)1 << 30)) {
        PyErr_SetString(PyExc_OverflowError, "too many rows for the row table");
    } else if (table_init(&t, n[0] + n[1]) >= 0) {
        int64_t *o = (int64_t *)out.buf;
        int32_t ids = 0;
        for (int side = 0; side < 2; side++) {
            for (Py_ssize_t i = 0; i < n[side]; i++) {
                uint64_t h = row_mix(&sides[side], i);
                Py_ssize_t s = table_find(&t, sides, n[0], side, i, h);
                if (t.rep[s] < 0) {
                    t.rep[s] = (int32_t)(side ? n[0] + i : i);
                    t.tag[s] = (uint32_t)(h >> 32);
                    t.val[s] = ids++;
                }
                *o++ = t.val[s];
            }
        }
        table_free(&t);
        result = PyLong_FromLong(ids);
    }
    release_rows(&sides[0]); release_rows(&sides[1]); PyBuffer_Release(&out);
    return result;
}

/*
 * agreement_counts(g, p, ga, pb, out) -> None
 *
 * g: (n_g, kg), p: (n_p, kp) int64, any layout; ga, pb: (m,) int64 row indices (aligned rows); out: (kg, kp)
 * writable int64, C order. out[i, j] = the number of t < m with g[ga[t], i] == p[pb[t], j]
 * (np.stack([p[pb, j] for j]) == g[ga, i][:, None]).sum(axis=0) per i.
 */
static PyObject *agreement_counts(PyObject *self, PyObject *args) {
    PyObject *g_o, *p_o, *ga_o, *pb_o, *out_o;
    if (!PyArg_ParseTuple(args, "OOOOO:agreement_counts", &g_o, &p_o, &ga_o, &pb_o, &out_o)) return NULL;
    Py_buffer g, p, ga, pb, out;
    Py_ssize_t ng, kg, np_, kp;
    if (get_keys(g_o, &g, &ng, &kg) < 0) return NULL;
    if (get_keys(p_o, &p, &np_, &kp) < 0) { PyBuffer_Release(&g); return NULL; }
    if (get_buffer(ga_o, &ga, "lq", "ga") < 0) { PyBuffer_Release(&g); PyBuffer_Release(&p); return NULL; }
    if (get_buffer(pb_o, &pb, "lq", "pb") < 0) { PyBuffer_Release(&g); PyBuffer_Release(&p); PyBuffer_Release(&ga); return NULL; }
    if (out_i64(out_o, &out, kg * kp, "out") < 0) {
        PyBuffer_Release(&g); PyBuffer_Release(&p); PyBuffer_Release(&ga); PyBuffer_Release(&pb);
        return NULL;
    }
    PyObject *result = NULL;
    Py_ssize_t m = ga.len / 8;
    const int64_t *ia = (const int64_t *)ga.buf, *ib = (const int64_t *)pb.buf;
    int ok = pb.len / 8 == m;
    for (Py_ssize_t t = 0; ok && t < m; t++)
        if (ia[t] < 0 || ia[t] >= ng || ib[t] < 0 || ib[t] >= np_) ok = 0;
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "ga and pb must be rows of g and p, one each");
    } else {
        int64_t *o = (int64_t *)out.buf;
        uint64_t *gv = PyMem_Malloc((kg + kp + 1) * sizeof(uint64_t)), *pv = gv + kg;
        if (!gv) {
            PyErr_NoMemory();
        } else {
            memset(o, 0, kg * kp * sizeof(int64_t));
            for (Py_ssize_t t = 0; t < m; t++) {  /* the two rows copied out once, then every column pair */
                for (Py_ssize_t i = 0; i < kg; i++) gv[i] = KEY(g, ia[t], i);
                for (Py_ssize_t j = 0; j < kp; j++) pv[j] = KEY(p, ib[t], j);
                for (Py_ssize_t i = 0; i < kg; i++) {
                    int64_t *row = o + i * kp;
                    uint64_t x = gv[i];
                    for (Py_ssize_t j = 0; j < kp; j++) row[j] += pv[j] == x;
                }
            }
            PyMem_Free(gv);
            result = Py_None;
            Py_INCREF(result);
        }
    }
    PyBuffer_Release(&g); PyBuffer_Release(&p); PyBuffer_Release(&ga); PyBuffer_Release(&pb); PyBuffer_Release(&out);
    return result;
}

/*
 * number_facts(v) -> (int, bool, int | None)
 *
 * v: (n,) float64, C-contiguous (NaN NULL). goldeval.answers.rows._number_facts in one pass: (the NaN cells, every
 * other cell a finite whole number, the int64 sum of the others (wrapping, as NumPy's) when each is whole and below
 * 2**62 in magnitude, else None).
 */
static PyObject *number_facts(PyObject *self, PyObject *args) {
    PyObject *v_o;
    if (!PyArg_ParseTuple(args, "O:number_facts", &v_o)) return NULL;
    Py_buffer v;
    if (get_buffer(v_o, &v, "d", "v") < 0) return NULL;
    const double *x = (const double *)v.buf;
    Py_ssize_t n = v.len / 8, nan = 0;
    int whole = 1, finite = 1, small = 1;
    uint64_t sum = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        double xi = x[i];
        if (xi != xi) { nan++; continue; }
        if (!(xi == floor(xi))) whole = 0;
        if (!isfinite(xi)) finite = 0;
        if (!(fabs(xi) < 4611686018427387904.0)) small = 0;  /* 2**62 */
        if (whole && small) sum += (uint64_t)(int64_t)xi;
    }
    PyBuffer_Release(&v);
    PyObject *total;
    if (whole && small) total = PyLong_FromLongLong((long long)(int64_t)sum);
    else { total = Py_None; Py_INCREF(total); }
    if (!total) return NULL;
    return Py_BuildValue("nON", nan, (whole && finite) ? Py_True : Py_False, total);
}

/*
 * float_decimals(x, out) -> None
 *
 * x: (n,) float64, out: (n,) writable int64, both C-contiguous. goldeval.answers.values.float_decimals cell by cell,
 * with NumPy's rounding (np.round(x, d) is rint(x * 10**d) / 10**d, and rint(x) for d = 0): 0 for inf and NaN; 1
 * for a finite x equal to its rounding to 0 decimals; else the fewest d in 1..15 with np.round(x, d) == x; else 16.
 */
static PyObject *float_decimals(PyObject *self, PyObject *args) {
    PyObject *x_o, *out_o;
    if (!PyArg_ParseTuple(args, "OO:float_decimals", &x_o, &out_o)) return NULL;
    Py_buffer x, out;
    if (get_buffer(x_o, &x, "d", "x") < 0) return NULL;
    Py_ssize_t n = x.len / 8;
    if (out_i64(out_o, &out, n, "out") < 0) { PyBuffer_Release(&x); return NULL; }
    static const double p10[16] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    const double *v = (const double *)x.buf;
    int64_t *o = (int64_t *)out.buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        double xi = v[i];
        if (!isfinite(xi)) { o[i] = 0; continue; }
        if (xi == rint(xi)) { o[i] = 1; continue; }
        int64_t dec = 16;
        for (int d = 1; d < 16; d++) {
            if (rint(xi * p10[d]) / p10[d] == xi) { dec = d; break; }
        }
        o[i] = dec;
    }
    PyBuffer_Release(&x);
    PyBuffer_Release(&out);
    Py_RETURN_NONE;
}

/* A 2-D float64 buffer (any strides). */
static int get_f64_2d(PyObject *o, Py_buffer *v, const char *what) {
    if (PyObject_GetBuffer(o, v, PyBUF_STRIDES | PyBUF_FORMAT) < 0) return -1;
    const char *f = v->format ? v->format : "B";
    size_t fl = strlen(f);
    if (v->ndim != 2 || v->itemsize != 8 || fl == 0 || fl > 2 || f[fl - 1] != 'd' || (fl == 2 && strchr("@=<", f[0]) == NULL)) {
        PyBuffer_Release(v);
        PyErr_Format(PyExc_TypeError, "%s must be a 2-D float64 array", what);
        return -1;
    }
    return 0;
}

/* np.maximum of two float64: NaN if either is NaN. */
static inline double np_maximum(double a, double b) {
    if (a != a) return a;
    if (b != b) return b;
    return a >= b ? a : b;
}

/*
 * all_close(g, p, half, rel) -> bool
 *
 * g, p, half: (n, m) float64, any layout; rel: (m,) float64, one relative tolerance per column. True when every
 * cell meets the tolerance rule of goldeval.answers.numbers.numbers_close:
 *     NULL (NaN) meets only NULL; else |g - p| <= max(0 if g and p are both whole else rel * max(|g|, |p|), half)
 * i.e. numbers_close(g, p, half, rel_tol=rel).all(), stopping at the first cell that is not close.
 */
static PyObject *all_close(PyObject *self, PyObject *args) {
    PyObject *g_o, *p_o, *h_o, *r_o;
    if (!PyArg_ParseTuple(args, "OOOO:all_close", &g_o, &p_o, &h_o, &r_o)) return NULL;
    Py_buffer g, p, h, r;
    if (get_f64_2d(g_o, &g, "g") < 0) return NULL;
    if (get_f64_2d(p_o, &p, "p") < 0) { PyBuffer_Release(&g); return NULL; }
    if (get_f64_2d(h_o, &h, "half") < 0) { PyBuffer_Release(&g); PyBuffer_Release(&p); return NULL; }
    if (get_buffer(r_o, &r, "d", "rel") < 0) { PyBuffer_Release(&g); PyBuffer_Release(&p); PyBuffer_Release(&h); return NULL; }
    Py_ssize_t n = g.shape[0], m = g.shape[1];
    PyObject *result = NULL;
    if (p.shape[0] != n || p.shape[1] != m || h.shape[0] != n || h.shape[1] != m || r.len / 8 != m) {
        PyErr_SetString(PyExc_ValueError, "g, p and half must have one shape, rel one item per column");
        goto done;
    }
    {
        const double *rel = (const double *)r.buf;
        int ok = 1;
        for (Py_ssize_t j = 0; ok && j < m; j++) {  /* column by column: each column is read in order */
            double rj = rel[j];
            for (Py_ssize_t i = 0; i < n; i++) {
                double gv = F64(g, i, j), pv = F64(p, i, j);
                int gn = gv != gv, pn = pv != pv;
                if (gn || pn) {
                    if (!(gn && pn)) { ok = 0; break; }
                    continue;
                }
                double diff = fabs(gv - pv);
                double relp = rj * np_maximum(fabs(gv), fabs(pv));
                int whole = (gv == floor(gv)) && (pv == floor(pv));
                double lim = np_maximum(whole ? 0.0 : relp, F64(h, i, j));
                if (!(diff <= lim)) { ok = 0; break; }
            }
        }
        result = PyBool_FromLong(ok);
    }
done:
    PyBuffer_Release(&g); PyBuffer_Release(&p); PyBuffer_Release(&h); PyBuffer_Release(&r);
    return result;
}


/* ---- labels: the plain rows of a JSONL label file (goldeval.labelfile; the Python loop there stays the definition
 * and the fallback, and handles every row this kernel leaves to it; tests/unit/test_fast_paths.py checks the two
 * agree) ---- */

/* raw: the buffer's memory is PyMem_Raw* (usable without the GIL; then no error is set on failure, the caller sets
 * it once it holds the GIL again) */
typedef struct { char *p; Py_ssize_t n, cap; int raw; } Buf;

/* 1 when the n bytes at d (ASCII) hold no control character (< 0x20), quote or backslash: the string's JSON is
 * then the bytes as they are between quotes (put_json_str's rule). Eight bytes at a time, the last word padded
 * with 'a' (a byte of none of those kinds): a short id costs one word's test, not a loop over its characters. A
 * byte b of a word is found by the exact "has a byte less than" test, (v - 0x20…20) & ~v & 0x80…80, for b < 0x20,
 * and by "has a zero byte" on v ^ 0x22…22 and v ^ 0x5C…5C: a borrow can only pass a byte that was found already,
 * so the word's answer (any byte or none) is exact. */
static inline int ascii_json_plain(const unsigned char *d, Py_ssize_t n) {
    const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
    Py_ssize_t i = 0;
    for (;;) {
        uint64_t v = 0x6161616161616161ULL;  /* 'a' in every byte */
        Py_ssize_t take = n - i < 8 ? n - i : 8;
        if (take <= 0) return 1;
        memcpy(&v, d + i, (size_t)take);
        uint64_t q = v ^ (ones * '"'), b = v ^ (ones * '\\');
        if (((v - ones * 0x20) & ~v) & high) return 0;
        if ((((q - ones) & ~q) | ((b - ones) & ~b)) & high) return 0;
        i += take;
    }
}

/* Room for n more bytes in b (-1: out of memory, the error set unless b is raw). */
static int buf_reserve(Buf *b, Py_ssize_t n) {
    if (b->n + n > b->cap) {
        Py_ssize_t cap = b->cap ? b->cap : 1 << 16;
        while (cap < b->n + n) cap *= 2;
        char *q = (char *)(b->raw ? PyMem_RawRealloc(b->p, cap) : PyMem_Realloc(b->p, cap));
        if (!q) { if (!b->raw) PyErr_NoMemory(); return -1; }
        b->p = q; b->cap = cap;
    }
    return 0;
}

static int buf_put(Buf *b, const char *s, Py_ssize_t n) {
    if (buf_reserve(b, n) < 0) return -1;
    memcpy(b->p + b->n, s, n);
    b->n += n;
    return 0;
}

/* A JSON string as orjson.dumps writes it: an ASCII string with no quote, backslash or control character as is,
 * between quotes; any other string by orjson.dumps itself. */
static int put_json_str(Buf *b, PyObject *s, PyObject *dumps) {
    if (PyUnicode_IS_ASCII(s)) {
        const unsigned char *d = (const unsigned char *)PyUnicode_DATA(s);
        Py_ssize_t n = PyUnicode_GET_LENGTH(s), i = 0;
        while (i < n && d[i] >= 0x20 && d[i] != '"' && d[i] != '\\') i++;
        if (i == n) {
            if (buf_put(b, "\"", 1) < 0 || buf_put(b, (const char *)d, n) < 0 || buf_put(b, "\"", 1) < 0) return -1;
            return 0;
        }
    }
    PyObject *r = PyObject_CallOneArg(dumps, s);
    if (!r) return -1;
    if (!PyBytes_Check(r)) { Py_DECREF(r); PyErr_SetString(PyExc_TypeError, "dumps must return bytes"); return -1; }
    int rc = buf_put(b, PyBytes_AS_STRING(r), PyBytes_GET_SIZE(r));
    Py_DECREF(r);
    return rc;
}

/* A plain label: a non-empty str whose first and last characters are not white space (str.isspace). */
static inline int plain_label(PyObject *v) {
    if (!PyUnicode_CheckExact(v)) return 0;
    Py_ssize_t n = PyUnicode_GET_LENGTH(v);
    if (n == 0) return 0;
    int kind = PyUnicode_KIND(v);
    const void *d = PyUnicode_DATA(v);
    return !Py_UNICODE_ISSPACE(PyUnicode_READ(kind, d, 0)) && !Py_UNICODE_ISSPACE(PyUnicode_READ(kind, d, n - 1));
}

/* The pairs of one call: (gold, pred) by content, with the count to add and what an entry writes for them. */
typedef struct {
    uint64_t h;
    PyObject *key;      /* the tuple (gold, pred) of the first row (a new reference); NULL: an empty slot */
    Py_ssize_t add;     /* rows to add to counts[key] */
    char *json;         /* ',"gold":<gold>,"pred":<pred>,"outcome":"xx"}\n' */
    Py_ssize_t json_len;
    Py_ssize_t code;    /* emit & 4: the pair's code (its tail's index in the tails dict); -1: not looked up yet */
    Py_ssize_t stamp;   /* emit & 4: the call (LabelTable.calls) that last listed this code among the codes used */
} Pair;

#define PAIRS 1024  /* slots (a power of two); at most PAIRS / 2 pairs are held, then they are added to counts */

static inline uint64_t str_hash(PyObject *s, uint64_t h) {
    if (s == Py_None) return h * 1099511628211ULL ^ 0x9e3779b97f4a7c15ULL;
    const unsigned char *d = (const unsigned char *)PyUnicode_DATA(s);
    Py_ssize_t n = PyUnicode_GET_LENGTH(s) * PyUnicode_KIND(s);
    h ^= (uint64_t)n * 0x100000001b3ULL;
    for (Py_ssize_t i = 0; i < n; i++) h = (h ^ d[i]) * 1099511628211ULL;
    return h;
}

/* The same str (or both None): a str's kind is the narrowest that holds it, so equal texts have equal bytes. */
static inline int same_text(PyObject *a, PyObject *b) {
    if (a == b) return 1;
    if (a == Py_None || b == Py_None) return 0;
    Py_ssize_t n = PyUnicode_GET_LENGTH(a);
    return n == PyUnicode_GET_LENGTH(b) && PyUnicode_KIND(a) == PyUnicode_KIND(b)
        && memcmp(PyUnicode_DATA(a), PyUnicode_DATA(b), n * PyUnicode_KIND(a)) == 0;
}

/* counts[key] += add for every held pair (then add = 0); with clear, the slots are emptied too. -1 on error. */
static int pairs_flush(Pair *t, PyObject *counts, int clear) {
    int rc = 0;
    for (int i = 0; i < PAIRS; i++) {
        if (!t[i].key) continue;
        if (rc == 0 && t[i].add) {
            PyObject *c = PyDict_GetItemWithError(counts, t[i].key);
            Py_ssize_t cv = c ? PyLong_AsSsize_t(c) : -1;
            PyObject *nv = (cv == -1) ? NULL : PyLong_FromSsize_t(cv + t[i].add);
            if (!nv) {
                if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "counts changed during label_lines");
                rc = -1;
            } else {
                if (PyDict_SetItem(counts, t[i].key, nv) < 0) rc = -1;
                Py_DECREF(nv);
            }
        }
        t[i].add = 0;
        if (clear) {
            Py_CLEAR(t[i].key);
            PyMem_Free(t[i].json);
            t[i].json = NULL;
        }
    }
    return rc;
}

/* What label_lines keeps from one call to the next of a run (a capsule from label_table): the pairs met, with
 * the rows not yet added to counts, and the key objects orjson gave the three fields (compared by identity). */
typedef struct {
    Pair pairs[PAIRS];
    int held;
    PyObject *seen[3];
    Py_ssize_t calls;   /* label_lines calls with emit & 4 so far (stamps the pairs used in a call) */
} LabelTable;

static void label_table_free(PyObject *cap) {
    LabelTable *t = (LabelTable *)PyCapsule_GetPointer(cap, "goldeval._fast.LabelTable");
    if (!t) { PyErr_Clear(); return; }
    for (int i = 0; i < PAIRS; i++) { Py_XDECREF(t->pairs[i].key); PyMem_Free(t->pairs[i].json); }
    for (int j = 0; j < 3; j++) Py_XDECREF(t->seen[j]);
    PyMem_Free(t);
}

/* label_table() -> capsule: the state of label_lines for one run (one counts dict, one positive label). */
static PyObject *label_table(PyObject *self, PyObject *args) {
    LabelTable *t = (LabelTable *)PyMem_Calloc(1, sizeof(LabelTable));
    if (!t) return PyErr_NoMemory();
    PyObject *cap = PyCapsule_New(t, "goldeval._fast.LabelTable", label_table_free);
    if (!cap) PyMem_Free(t);
    return cap;
}

/* label_flush(table, counts) -> None: add the rows label_lines counted and has not added yet to counts. */
static PyObject *label_flush(PyObject *self, PyObject *args) {
    PyObject *cap, *counts;
    if (!PyArg_ParseTuple(args, "OO!", &cap, &PyDict_Type, &counts)) return NULL;
    LabelTable *t = (LabelTable *)PyCapsule_GetPointer(cap, "goldeval._fast.LabelTable");
    if (!t || pairs_flush(t->pairs, counts, 0) < 0) return NULL;
    Py_RETURN_NONE;
}

static inline void put_num(Buf *b, Py_ssize_t v) {  /* (room reserved by the caller) */
    char tmp[24];
    int k = 0;
    size_t u = v < 0 ? (size_t)(-(v + 1)) + 1 : (size_t)v;
    do { tmp[k++] = (char)('0' + u % 10); u /= 10; } while (u);
    if (v < 0) b->p[b->n++] = '-';
    while (k) b->p[b->n++] = tmp[--k];
}

/*
 * label_lines(block, pos, lineno, loads, refused, id_key, gold_key, pred_key, counts, repeated, positive, dumps, emit,
 *             table) -> (pos, lineno, n_rows, n_null, body)
 *
 * Reads the lines of block[pos:] (bytes of whole lines; lineno = the number of the line before pos) while each is a
 * plain row, and stops at the first that is not (pos and lineno then point just before it) or at the end of the block.
 * A plain row: loads(line) (orjson.loads, given the line with its newline) is a dict; its id_key is a non-empty
 * str whose hash is not in *repeated*; gold_key holds a plain label; pred_key holds a plain label or null; and the
 * pair (gold, pred) is already a key of *counts* (so nothing about a label's first row can change). For each
 * plain row counts[(gold, pred)] gets 1 more: held in *table* (label_table) until label_flush(table, counts),
 * which the caller must call before it reads a count (adding to counts meanwhile is fine). *emit* is a bit mask:
 * with 1 its entry {"id","line","gold","pred","outcome"} is added to body as orjson.dumps writes it, followed by a
 * newline; with 2 the run store's record of the case, {"id","status":"scored","line","gold","pred","outcome"}, is
 * added to records (each followed by a newline) and the id's JSON to ids (each followed by a comma), and the result
 * is (pos, lineno, n_rows, n_null, body, records, ids). With 4 (instead of 2: the run store's coded block,
 * goldeval.runs.blocks) the case records are not written: the result is (pos, lineno, n_rows, n_null, body, codes,
 * ids, used), where ids is as with 2, codes holds one uint32 (native byte order) a row: the index of the row's
 * tail, ',"gold":<gold>,"pred":<pred>,"outcome":"xx"}' (what its record holds after its line number), in the
 * dict *tails* (the 15th argument, tail bytes -> code, shared with the caller: a tail met for the first time is
 * added with the next code, len(tails)), and used lists the codes of this call's rows once each. The rows of one
 * call are the lines lineno + 1 ... lineno + n_rows (consecutive: a blank line stops the run).
 * A line that loads refuses with *refused* (orjson.JSONDecodeError) stops the run; any other error is raised.
 */
static PyObject *label_lines(PyObject *self, PyObject *args) {
    Py_buffer blk;
    Py_ssize_t pos, lineno;
    PyObject *loads, *refused, *want[3], *counts, *repeated, *positive, *dumps, *cap, *tails = NULL;
    int emit;
    if (!PyArg_ParseTuple(args, "y*nnOOUUUO!OUOiO|O!", &blk, &pos, &lineno, &loads, &refused, &want[0], &want[1], &want[2],
                          &PyDict_Type, &counts, &repeated, &positive, &dumps, &emit, &cap, &PyDict_Type, &tails))
        return NULL;
    LabelTable *table = (LabelTable *)PyCapsule_GetPointer(cap, "goldeval._fast.LabelTable");
    if (!table) { PyBuffer_Release(&blk); return NULL; }
    if ((emit & 4) && (!tails || (emit & 2))) {
        PyBuffer_Release(&blk);
        PyErr_SetString(PyExc_ValueError, "emit & 4 needs the tails dict, and excludes emit & 2");
        return NULL;
    }
    PyObject *used = (emit & 4) ? PyList_New(0) : NULL;
    if ((emit & 4) && !used) { PyBuffer_Release(&blk); return NULL; }
    Py_ssize_t call = (emit & 4) ? ++table->calls : 0;
    if (!PyAnySet_Check(repeated)) { PyBuffer_Release(&blk); PyErr_SetString(PyExc_TypeError, "repeated must be a set"); return NULL; }
    const char *base = (const char *)blk.buf;
    Py_ssize_t end = blk.len, n_rows = 0, n_null = 0;
    int check_repeats = PySet_GET_SIZE(repeated) > 0;
    Buf out = {NULL, 0, 0}, tmp = {NULL, 0, 0}, recs = {NULL, 0, 0}, ids = {NULL, 0, 0}, codes = {NULL, 0, 0};
    PyObject *result = NULL, **seen = table->seen;
    Pair *pairs = table->pairs;
    if (pos < 0 || pos > end) { PyErr_SetString(PyExc_ValueError, "pos out of range"); goto done; }
    while (pos < end) {
        const char *nl = memchr(base + pos, '\n', end - pos);
        Py_ssize_t next = nl ? (nl - base) + 1 : end;
        PyObject *line = PyBytes_FromStringAndSize(base + pos, next - pos);
        if (!line) goto done;
        PyObject *data = PyObject_CallOneArg(loads, line);
        Py_DECREF(line);
        if (!data) {
            if (PyErr_ExceptionMatches(refused)) { PyErr_Clear(); break; }
            goto done;
        }
        int plain = 0;
        PyObject *got[3] = {NULL, NULL, NULL};
        if (PyDict_CheckExact(data)) {
            /* the three fields by going through the items (orjson's keys: str), each key compared first by
             * identity with the key object orjson gave that field before (held: never another object's address) */
            Py_ssize_t it = 0;
            PyObject *k, *v;
            while (PyDict_Next(data, &it, &k, &v)) {
                int known = 0;
                for (int j = 0; j < 3; j++)
                    if (k == seen[j]) { got[j] = v; known = 1; }
                if (known || !PyUnicode_CheckExact(k)) continue;
                for (int j = 0; j < 3; j++)  /* (fields of one name are adopted together: they stay one object) */
                    if (same_text(k, want[j])) { Py_INCREF(k); Py_XSETREF(seen[j], k); got[j] = v; }
            }
        }
        PyObject *rid = got[0], *g = got[1], *p = got[2];
        if (rid && g && p) {
            plain = PyUnicode_CheckExact(rid) && PyUnicode_GET_LENGTH(rid) > 0 && plain_label(g) && (p == Py_None || plain_label(p));
        }
        if (plain && check_repeats) {
            Py_hash_t h = PyObject_Hash(rid);
            PyObject *hv = h == -1 ? NULL : PyLong_FromSsize_t(h);
            int in = hv ? PySet_Contains(repeated, hv) : -1;
            Py_XDECREF(hv);
            if (in < 0) { Py_DECREF(data); goto done; }
            plain = !in;
        }
        Pair *e = NULL;
        if (plain) {
            uint64_t h = str_hash(p, str_hash(g, 14695981039346656037ULL));
            size_t i = (size_t)(h ^ (h >> 29)) & (PAIRS - 1);
            while (pairs[i].key && !(pairs[i].h == h && same_text(PyTuple_GET_ITEM(pairs[i].key, 0), g)
                                     && same_text(PyTuple_GET_ITEM(pairs[i].key, 1), p)))
                i = (i + 1) & (PAIRS - 1);
            e = &pairs[i];
            if (!e->key) {  /* a pair not held yet: it must be counted already */
                if (table->held >= PAIRS / 2) {
                    if (pairs_flush(pairs, counts, 1) < 0) { Py_DECREF(data); goto done; }
                    table->held = 0;
                    i = (size_t)(h ^ (h >> 29)) & (PAIRS - 1);
                    e = &pairs[i];
                }
                PyObject *key = PyTuple_Pack(2, g, p);
                if (!key) { Py_DECREF(data); goto done; }
                PyObject *c = PyDict_GetItemWithError(counts, key);
                if (!c) {
                    Py_DECREF(key);
                    if (PyErr_Occurred()) { Py_DECREF(data); goto done; }
                    plain = 0;
                } else {
                    e->h = h; e->key = key; e->add = 0; e->code = -1; e->stamp = 0;
                    table->held++;
                }
            }
        }
        if (!plain) { Py_DECREF(data); break; }
        if (emit && !e->json) {  /* what the pair's entries write after their line number (once a run) */
            int gpos = PyUnicode_Compare(g, positive) == 0;
            int ppos = p != Py_None && PyUnicode_Compare(p, positive) == 0;
            if (PyErr_Occurred()) { Py_DECREF(data); goto done; }
            const char *outcome = gpos ? (ppos ? "tp" : "fn") : (ppos ? "fp" : "tn");
            tmp.n = 0;
            if (buf_put(&tmp, ",\"gold\":", 8) < 0 || put_json_str(&tmp, g, dumps) < 0
                || buf_put(&tmp, ",\"pred\":", 8) < 0
                || (p == Py_None ? buf_put(&tmp, "null", 4) : put_json_str(&tmp, p, dumps)) < 0
                || buf_put(&tmp, ",\"outcome\":\"", 12) < 0 || buf_put(&tmp, outcome, 2) < 0
                || buf_put(&tmp, "\"}\n", 3) < 0) { Py_DECREF(data); goto done; }
            e->json = (char *)PyMem_Malloc(tmp.n);
            if (!e->json) { PyErr_NoMemory(); Py_DECREF(data); goto done; }
            memcpy(e->json, tmp.p, tmp.n);
            e->json_len = tmp.n;
        }
        e->add++;
        lineno++;
        n_rows++;
        if (p == Py_None) n_null++;
        if (emit & 2) {
            Py_ssize_t id0 = ids.n;
            char num[24];
            Buf nb = {num, 0, (Py_ssize_t)sizeof num};
            put_num(&nb, lineno);
            if (put_json_str(&ids, rid, dumps) < 0 || buf_put(&recs, "{\"id\":", 6) < 0
                || buf_put(&recs, ids.p + id0, ids.n - id0) < 0 || buf_put(&ids, ",", 1) < 0
                || buf_put(&recs, ",\"status\":\"scored\",\"line\":", 26) < 0 || buf_put(&recs, num, nb.n) < 0
                || buf_put(&recs, e->json, e->json_len) < 0) { Py_DECREF(data); goto done; }
        }
        if (emit & 4) {
            if (e->code < 0) {  /* the pair's tail (its JSON without the newline) looked up once in this slot */
                PyObject *tail = PyBytes_FromStringAndSize(e->json, e->json_len - 1);
                PyObject *c = tail ? PyDict_GetItemWithError(tails, tail) : NULL;
                if (c) e->code = PyLong_AsSsize_t(c);
                else if (tail && !PyErr_Occurred()) {
                    PyObject *nc = PyLong_FromSsize_t(PyDict_GET_SIZE(tails));
                    if (nc && PyDict_SetItem(tails, tail, nc) == 0) e->code = PyDict_GET_SIZE(tails) - 1;
                    Py_XDECREF(nc);
                }
                Py_XDECREF(tail);
                if (e->code < 0 || e->code > 0xFFFFFFFFLL) {
                    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "tails: a code must be an int in 0 .. 2**32 - 1");
                    e->code = -1;
                    Py_DECREF(data); goto done;
                }
            }
            if (e->stamp != call) {
                PyObject *c = PyLong_FromSsize_t(e->code);
                int rc = c ? PyList_Append(used, c) : -1;
                Py_XDECREF(c);
                if (rc < 0) { Py_DECREF(data); goto done; }
                e->stamp = call;
            }
            uint32_t code = (uint32_t)e->code;
            Py_ssize_t idn = PyUnicode_GET_LENGTH(rid);
            const unsigned char *idd = (const unsigned char *)PyUnicode_DATA(rid);
            /* the common id: as is between quotes (put_json_str's rule, a word at a time) */
            int as_is = PyUnicode_IS_ASCII(rid) && ascii_json_plain(idd, idn);
            if (buf_reserve(&ids, idn + 3) < 0 || buf_reserve(&codes, 4) < 0) { Py_DECREF(data); goto done; }
            if (as_is) {
                char *w = ids.p + ids.n;
                w[0] = '"';
                memcpy(w + 1, idd, idn);
                w[idn + 1] = '"';
                w[idn + 2] = ',';
                ids.n += idn + 3;
            } else if (put_json_str(&ids, rid, dumps) < 0 || buf_put(&ids, ",", 1) < 0) { Py_DECREF(data); goto done; }
            memcpy(codes.p + codes.n, &code, 4);
            codes.n += 4;
        }
        if (emit & 1) {
            if (buf_put(&out, "{\"id\":", 6) < 0 || put_json_str(&out, rid, dumps) < 0) { Py_DECREF(data); goto done; }
            if (out.n + 32 + e->json_len > out.cap) {  /* room for the rest: the line number and the pair's part */
                Py_ssize_t need = out.n + 32 + e->json_len, cap = out.cap ? out.cap : 1 << 16;
                while (cap < need) cap *= 2;
                char *q = (char *)PyMem_Realloc(out.p, cap);
                if (!q) { PyErr_NoMemory(); Py_DECREF(data); goto done; }
                out.p = q; out.cap = cap;
            }
            memcpy(out.p + out.n, ",\"line\":", 8);
            out.n += 8;
            put_num(&out, lineno);
            memcpy(out.p + out.n, e->json, e->json_len);
            out.n += e->json_len;
        }
        Py_DECREF(data);
        pos = next;
    }
    {
        PyObject *body = PyBytes_FromStringAndSize(out.p ? out.p : "", out.n);
        if (body && (emit & 2)) {
            PyObject *r = PyBytes_FromStringAndSize(recs.p ? recs.p : "", recs.n);
            PyObject *d = r ? PyBytes_FromStringAndSize(ids.p ? ids.p : "", ids.n) : NULL;
            if (d) result = Py_BuildValue("nnnnNNN", pos, lineno, n_rows, n_null, body, r, d);
            else { Py_DECREF(body); Py_XDECREF(r); }
        } else if (body && (emit & 4)) {
            PyObject *c = PyBytes_FromStringAndSize(codes.p ? codes.p : "", codes.n);
            PyObject *d = c ? PyBytes_FromStringAndSize(ids.p ? ids.p : "", ids.n) : NULL;
            if (d) { result = Py_BuildValue("nnnnNNNO", pos, lineno, n_rows, n_null, body, c, d, used); }
            else { Py_DECREF(body); Py_XDECREF(c); }
        } else if (body) result = Py_BuildValue("nnnnN", pos, lineno, n_rows, n_null, body);
    }
done:
    Py_XDECREF(used);
    PyMem_Free(codes.p);
    PyMem_Free(out.p);
    PyMem_Free(tmp.p);
    PyMem_Free(recs.p);
    PyMem_Free(ids.p);
    PyBuffer_Release(&blk);
    return result;
}


/* ---- the first pass over a JSONL file: ids' hashes (goldeval.ids; the Python there stays the definition and the
 * fallback; tests/unit/test_ids_scan.py checks the two agree) ---- */

#if PY_VERSION_HEX >= 0x030E0000
#define HASH_BYTES(p, n) Py_HashBuffer((p), (n))
#else
#define HASH_BYTES(p, n) _Py_HashBytes((p), (n))
#endif

/* 1 when hay is ASCII and holds needle (k >= 1 bytes) exactly once by bytes.count (non-overlapping), else 0. */
static int ascii_once(const unsigned char *hay, Py_ssize_t n, const unsigned char *needle, Py_ssize_t k) {
    /* ASCII: every byte below 0x80, a word at a time */
    uint64_t acc = 0, v;
    Py_ssize_t i = 0;
    for (; i + 8 <= n; i += 8) { memcpy(&v, hay + i, 8); acc |= v; }
    for (; i < n; i++) acc |= hay[i];
    if (acc & 0x8080808080808080ULL) return 0;
    /* the first occurrence (leftmost), then none from its end on: exactly one non-overlapping occurrence */
    const unsigned char *end = hay + n, *p = hay, *found = NULL;
    while (end - p >= k) {
        p = (const unsigned char *)memchr(p, needle[0], (size_t)(end - p - k + 1));
        if (!p) break;
        if (memcmp(p, needle, (size_t)k) == 0) {
            if (found) return 0;
            found = p;
            p += k;
        } else p++;
    }
    return found != NULL;
}

/*
 * scan_ids(block, quoted) -> (n_lines, hashes, slow)
 *
 * The lines of block (split at b"\n"; a last piece without one is a line when not empty), each read by the prefix
 * rule of goldeval.ids.scan_jsonl_ids for an id rule that takes every non-empty string as it is: an ASCII line
 * that starts {<quoted>:" or {<quoted>: " , names <quoted> once (bytes.count) and whose text up to the next quote
 * is not empty and holds no backslash gives that text as its id, whose hash (that of the str, which for ASCII is
 * the hash of its bytes) goes to hashes (int64, native order, bytes). slow: [line index, start, end, ...] of
 * every other line (end past its newline), for the caller to read.
 */
static PyObject *scan_ids(PyObject *self, PyObject *args) {
    Py_buffer blk, q;
    if (!PyArg_ParseTuple(args, "y*y*", &blk, &q)) return NULL;
    const char *b = (const char *)blk.buf, *quoted = (const char *)q.buf;
    Py_ssize_t n = blk.len, k = q.len, pos = 0, idx = 0, nh = 0, cap = 1024;
    PyObject *result = NULL, *slow = PyList_New(0);
    int64_t *hashes = (int64_t *)PyMem_Malloc(cap * sizeof(int64_t));
    if (!slow || !hashes) { if (!hashes) PyErr_NoMemory(); goto done; }
    while (pos < n) {
        const char *nl = memchr(b + pos, '\n', n - pos);
        Py_ssize_t stop = nl ? (nl - b) : n, next = nl ? stop + 1 : n;
        const unsigned char *ln = (const unsigned char *)b + pos;
        Py_ssize_t len = next - pos;  /* with its newline */
        int ok = 0;
        Py_ssize_t start = 0, end = 0;
        if (len > k + 2 && ln[0] == '{' && memcmp(ln + 1, quoted, k) == 0 && ln[k + 1] == ':') {
            start = (ln[k + 2] == '"') ? k + 3 : (len > k + 3 && ln[k + 2] == ' ' && ln[k + 3] == '"') ? k + 4 : 0;
            if (start) {
                const unsigned char *qt = memchr(ln + start, '"', len - start);
                if (qt) {
                    end = qt - ln;
                    ok = end > start && memchr(ln + start, '\\', end - start) == NULL;
                }
            }
            if (ok) ok = ascii_once(ln, len, (const unsigned char *)quoted, k);
        }
        if (ok) {
            if (nh == cap) {
                cap *= 2;
                int64_t *h2 = (int64_t *)PyMem_Realloc(hashes, cap * sizeof(int64_t));
                if (!h2) { PyErr_NoMemory(); goto done; }
                hashes = h2;
            }
            hashes[nh++] = (int64_t)HASH_BYTES(ln + start, end - start);
        } else if (!(nl == NULL && len == 0)) {
            PyObject *t = Py_BuildValue("nnn", idx, pos, next);
            if (!t) goto done;
            int rc = PyList_Append(slow, t);
            Py_DECREF(t);
            if (rc < 0) goto done;
        }
        idx++;
        pos = next;
    }
    {
        PyObject *hb = PyBytes_FromStringAndSize((const char *)hashes, nh * (Py_ssize_t)sizeof(int64_t));
        if (hb) result = Py_BuildValue("nNO", idx, hb, slow);
    }
done:
    Py_XDECREF(slow);
    PyMem_Free(hashes);
    PyBuffer_Release(&blk);
    PyBuffer_Release(&q);
    return result;
}

/*
 * partition_hashes(hashes, n) -> (bytes, counts)
 *
 * int64 hashes (a buffer) ordered by bucket h % n (Python's modulo: never negative), each bucket in the order
 * given (goldeval.ids.HashBuckets.flush), and the number in each bucket.
 */
static PyObject *partition_hashes(PyObject *self, PyObject *args) {
    Py_buffer v;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "y*n", &v, &n)) return NULL;
    PyObject *result = NULL;
    if (n < 1 || v.len % 8) { PyErr_SetString(PyExc_ValueError, "n >= 1 and int64 hashes"); PyBuffer_Release(&v); return NULL; }
    Py_ssize_t m = v.len / 8;
    const int64_t *h = (const int64_t *)v.buf;
    Py_ssize_t *cnt = (Py_ssize_t *)PyMem_Calloc(n + 1, sizeof(Py_ssize_t));
    PyObject *out = PyBytes_FromStringAndSize(NULL, v.len);
    if (!cnt || !out) { if (!cnt) PyErr_NoMemory(); goto done; }
    int64_t *o = (int64_t *)PyBytes_AS_STRING(out);
    for (Py_ssize_t i = 0; i < m; i++) { int64_t r = h[i] % n; cnt[(r < 0 ? r + n : r) + 1]++; }
    PyObject *counts = PyList_New(n);
    if (!counts) goto done;
    for (Py_ssize_t b = 0; b < n; b++) {
        PyObject *c = PyLong_FromSsize_t(cnt[b + 1]);
        if (!c) { Py_DECREF(counts); goto done; }
        PyList_SET_ITEM(counts, b, c);
    }
    for (Py_ssize_t b = 1; b <= n; b++) cnt[b] += cnt[b - 1];  /* cnt[b]: where bucket b starts */
    for (Py_ssize_t i = 0; i < m; i++) { int64_t r = h[i] % n; o[cnt[r < 0 ? r + n : r]++] = h[i]; }
    result = Py_BuildValue("ON", out, counts);
done:
    Py_XDECREF(out);
    PyMem_Free(cnt);
    PyBuffer_Release(&v);
    return result;
}

/* repeated_of(hashes) -> list[int]: the int64 values (a buffer) that occur more than once, each once, in the
 * order of their second occurrence (an open-addressing table of the values seen, twice the size of the input). */
static PyObject *repeated_of(PyObject *self, PyObject *args) {
    Py_buffer v;
    if (!PyArg_ParseTuple(args, "y*", &v)) return NULL;
    if (v.len % 8) { PyErr_SetString(PyExc_ValueError, "int64 hashes"); PyBuffer_Release(&v); return NULL; }
    Py_ssize_t m = v.len / 8, size = 16;
    while (size < 2 * m) size *= 2;
    const int64_t *h = (const int64_t *)v.buf;
    PyObject *out = PyList_New(0);
    int64_t *val = (int64_t *)PyMem_Malloc(size * sizeof(int64_t));
    unsigned char *state = (unsigned char *)PyMem_Calloc(size, 1);  /* 0 empty, 1 seen once, 2 listed */
    if (!out || !val || !state) { if (out) PyErr_NoMemory(); Py_CLEAR(out); goto done; }
    for (Py_ssize_t i = 0; i < m; i++) {
        uint64_t x = (uint64_t)h[i] * 0x9e3779b97f4a7c15ULL;
        size_t j = (size_t)(x >> 20) & (size - 1);
        while (state[j] && val[j] != h[i]) j = (j + 1) & (size - 1);
        if (!state[j]) { state[j] = 1; val[j] = h[i]; }
        else if (state[j] == 1) {
            state[j] = 2;
            PyObject *o = PyLong_FromLongLong(h[i]);
            if (!o || PyList_Append(out, o) < 0) { Py_XDECREF(o); Py_CLEAR(out); goto done; }
            Py_DECREF(o);
        }
    }
done:
    PyMem_Free(val);
    PyMem_Free(state);
    PyBuffer_Release(&v);
    return out;
}

/*
 * resample_means(d, key, key_retry, first, out[, kernel]) -> None
 *
 * d: (n,) float64, 1 <= n < 2**31; key, key_retry: uint64 stream keys; first: index of the first resample (>= 0);
 * out: (k,) writable float64. out[i] = the mean of resample first + i: the sum of d[idx(p)] over its n draws
 * p = (first + i) * n + j, j = 0..n-1, added in four lanes (lane j % 4, each lane in order of j, a lane that gets
 * no draw at the end gets + 0.0 as the NumPy definition's zero padding does), then (l0 + l1) + (l2 + l3), divided by n.
 * Draw p: x = the low (p even) or high (p odd) 32 bits of splitmix64(key + GAMMA * (p / 2 + 1)); Lemire's
 * multiply-shift idx = (x * n) >> 32, rejected while the low 32 bits of x * n are below 2**32 mod n, when x is
 * drawn again as the low 32 bits of splitmix64(key_retry + GAMMA * (p * 64 + a + 1)), a = 1, 2, ...
 * kernel: "auto" (default: the fastest this CPU runs), "scalar" (portable C) or "avx512" (x86-64 with AVX-512 F and
 * DQ); every kernel gives the same bits (integer draws are exact; the four lanes are added in the same order, one
 * double at a time, without contraction). resample_kernels() -> tuple of the kernels this CPU runs, fastest first.
 * The GIL is released: callers run disjoint ranges of resamples on threads.
 */
#define BOOT_GAMMA 0x9E3779B97F4A7C15ULL
#define BOOT_BATCH 1024
#define BOOT_M1 0xBF58476D1CE4E5B9ULL
#define BOOT_M2 0x94D049BB133111EBULL
static inline uint64_t splitmix_mix(uint64_t z) {
    z = (z ^ (z >> 30)) * BOOT_M1;
    z = (z ^ (z >> 27)) * BOOT_M2;
    return z ^ (z >> 31);
}

typedef void (*boot_kernel)(const double *v, uint64_t n, uint64_t key, uint64_t key_r, uint64_t first, double *o,
                            Py_ssize_t k);

/* The batch's rejected draws drawn again (the rare case: below 2**-14 a draw at 100,000 values): x[b] is draw p + b,
 * idx[b] its index, rewritten where the multiply-shift was rejected. */
static void boot_redraw(const uint32_t *x, uint32_t *idx, Py_ssize_t len, uint64_t p, uint64_t key_r, uint64_t un,
                        uint32_t t) {
    for (Py_ssize_t b = 0; b < len; b++) {
        uint64_t m = (uint64_t)x[b] * un;
        if ((uint32_t)m >= t) continue;
        const uint64_t q = p + (uint64_t)b;
        for (uint64_t a = 1; (uint32_t)m < t; a++)
            m = (splitmix_mix(key_r + BOOT_GAMMA * (q * 64 + a + 1)) & 0xFFFFFFFFULL) * un;
        idx[b] = (uint32_t)(m >> 32);
    }
}

/* The portable kernel: a batch at a time, in three loops without a data-dependent branch, so that the CPU overlaps
 * them: the batch's words (word w holds draws 2w, low half, and 2w + 1, high half), the multiply-shift of each draw
 * with a flag for the rare rejection (then the batch's rejected draws are drawn again, as the definition says), then
 * the loads of the values. */
static void boot_scalar(const double *v, uint64_t un, uint64_t key, uint64_t key_r, uint64_t first, double *o,
                        Py_ssize_t k) {
    const Py_ssize_t n = (Py_ssize_t)un;
    const uint32_t t = (uint32_t)(((uint64_t)1 << 32) % un);
    uint32_t xs[BOOT_BATCH + 2];
    uint32_t idx[BOOT_BATCH];
    for (Py_ssize_t i = 0; i < k; i++) {
        uint64_t p = (first + (uint64_t)i) * un;
        double lane[4] = {0.0, 0.0, 0.0, 0.0};
        for (Py_ssize_t j0 = 0; j0 < n; j0 += BOOT_BATCH) {
            Py_ssize_t len = n - j0 < BOOT_BATCH ? n - j0 : BOOT_BATCH;
            const uint64_t odd = p & 1;
            const Py_ssize_t nw = (Py_ssize_t)((len + (Py_ssize_t)odd + 1) >> 1);
            const uint64_t base = key + BOOT_GAMMA * ((p >> 1) + 1);
            for (Py_ssize_t w = 0; w < nw; w++) {
                uint64_t word = splitmix_mix(base + BOOT_GAMMA * (uint64_t)w);
                xs[2 * w] = (uint32_t)word;
                xs[2 * w + 1] = (uint32_t)(word >> 32);
            }
            const uint32_t *x = xs + odd;  /* x[b]: draw p + b */
            uint32_t rejected = 0;
            for (Py_ssize_t b = 0; b < len; b++) {
                uint64_t m = (uint64_t)x[b] * un;
                idx[b] = (uint32_t)(m >> 32);
                rejected |= (uint32_t)((uint32_t)m < t);
            }
            if (rejected) boot_redraw(x, idx, len, p, key_r, un, t);
            /* j0 is a multiple of 4 (BOOT_BATCH is), so draw j0 + b goes to lane b % 4 */
            Py_ssize_t b = 0;
            double l0 = lane[0], l1 = lane[1], l2 = lane[2], l3 = lane[3];
            for (; b + 4 <= len; b += 4) {
                l0 += v[idx[b]];
                l1 += v[idx[b + 1]];
                l2 += v[idx[b + 2]];
                l3 += v[idx[b + 3]];
            }
            lane[0] = l0; lane[1] = l1; lane[2] = l2; lane[3] = l3;
            for (; b < len; b++) lane[b & 3] += v[idx[b]];
            p += (uint64_t)len;
        }
        for (Py_ssize_t j = n; j & 3; j++) lane[j & 3] += 0.0;
        o[i] = ((lane[0] + lane[1]) + (lane[2] + lane[3])) / (double)n;
    }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define BOOT_AVX512 1
#include <immintrin.h>
/* The same draws eight words (sixteen draws) at a time in AVX-512 registers: SplitMix64 with 64-bit multiplies
 * (vpmullq), the multiply-shift of each word's low and high half (vpmuludq) kept as the pair of 32-bit indices in
 * the word's place (so the index array reads as the scalar kernel's), the rejection flag as a mask over every half
 * made (a few beyond the batch: they only send the batch to boot_redraw, which looks at the batch's own draws).
 * The values are loaded one by one (a gather is no faster here) and added four lanes at a time in one 256-bit
 * register: lane l of the register is lane l of the definition, each lane added in order, so the same bits. */
__attribute__((target("avx512f,avx512dq")))
static void boot_avx512(const double *v, uint64_t un, uint64_t key, uint64_t key_r, uint64_t first, double *o,
                        Py_ssize_t k) {
    const Py_ssize_t n = (Py_ssize_t)un;
    const uint32_t t = (uint32_t)(((uint64_t)1 << 32) % un);
    /* uint32 arrays written only by vector stores (which may alias anything) and read as uint32: word w at [2w, 2w + 1] */
    uint32_t wb[BOOT_BATCH + 32] __attribute__((aligned(64)));  /* the words */
    uint32_t ib[BOOT_BATCH + 32] __attribute__((aligned(64)));  /* their halves' indices, the same places */
    const __m512i g8 = _mm512_set1_epi64((long long)(BOOT_GAMMA * 8));
    const __m512i steps = _mm512_mullo_epi64(_mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0), _mm512_set1_epi64((long long)BOOT_GAMMA));
    const __m512i m1 = _mm512_set1_epi64((long long)BOOT_M1), m2 = _mm512_set1_epi64((long long)BOOT_M2);
    const __m512i nn = _mm512_set1_epi64((long long)un), tt = _mm512_set1_epi64((long long)t);
    const __m512i low = _mm512_set1_epi64(0xFFFFFFFFLL), high = _mm512_set1_epi64((long long)0xFFFFFFFF00000000ULL);
    for (Py_ssize_t i = 0; i < k; i++) {
        uint64_t p = (first + (uint64_t)i) * un;
        __m256d acc = _mm256_setzero_pd();
        double lane[4];
        for (Py_ssize_t j0 = 0; j0 < n; j0 += BOOT_BATCH) {
            Py_ssize_t len = n - j0 < BOOT_BATCH ? n - j0 : BOOT_BATCH;
            const uint64_t odd = p & 1;
            const Py_ssize_t nw = (Py_ssize_t)((len + (Py_ssize_t)odd + 1) >> 1);
            __m512i z0 = _mm512_add_epi64(_mm512_set1_epi64((long long)(key + BOOT_GAMMA * ((p >> 1) + 1))), steps);
            __mmask8 rejected = 0;
            for (Py_ssize_t w = 0; w < nw; w += 8) {
                __m512i z = z0;
                z0 = _mm512_add_epi64(z0, g8);
                z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64(z, 30)), m1);
                z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64(z, 27)), m2);
                z = _mm512_xor_si512(z, _mm512_srli_epi64(z, 31));
                _mm512_store_si512((void *)(wb + 2 * w), z);
                const __m512i ml = _mm512_mul_epu32(z, nn);                          /* low half x n */
                const __m512i mh = _mm512_mul_epu32(_mm512_srli_epi64(z, 32), nn);   /* high half x n */
                rejected |= _mm512_cmplt_epu64_mask(_mm512_and_si512(ml, low), tt)
                          | _mm512_cmplt_epu64_mask(_mm512_and_si512(mh, low), tt);
                _mm512_store_si512((void *)(ib + 2 * w), _mm512_or_si512(_mm512_srli_epi64(ml, 32), _mm512_and_si512(mh, high)));
            }
            /* little-endian: the uint32 at 2w is word w's low half (draw 2w), at 2w + 1 its high half */
            uint32_t *idx = ib + odd;  /* idx[b]: draw p + b */
            if (rejected) boot_redraw(wb + odd, idx, len, p, key_r, un, t);
            Py_ssize_t b = 0;
            for (; b + 4 <= len; b += 4)
                acc = _mm256_add_pd(acc, _mm256_set_pd(v[idx[b + 3]], v[idx[b + 2]], v[idx[b + 1]], v[idx[b]]));
            if (b < len) {
                _mm256_storeu_pd(lane, acc);
                for (; b < len; b++) lane[b & 3] += v[idx[b]];
                acc = _mm256_loadu_pd(lane);
            }
            p += (uint64_t)len;
        }
        _mm256_storeu_pd(lane, acc);
        for (Py_ssize_t j = n; j & 3; j++) lane[j & 3] += 0.0;
        o[i] = ((lane[0] + lane[1]) + (lane[2] + lane[3])) / (double)n;
    }
}

static int boot_has_avx512(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
}
#endif

/* name -> kernel, or NULL (a Python error set) when this CPU cannot run it or the name is unknown */
static boot_kernel boot_kernel_named(const char *name) {
#ifdef BOOT_AVX512
    const int avx512 = boot_has_avx512();
#else
    const int avx512 = 0;
#endif
    if (strcmp(name, "auto") == 0) {
#ifdef BOOT_AVX512
        if (avx512) return boot_avx512;
#endif
        return boot_scalar;
    }
    if (strcmp(name, "scalar") == 0) return boot_scalar;
    if (strcmp(name, "avx512") == 0) {
#ifdef BOOT_AVX512
        if (avx512) return boot_avx512;
#endif
        PyErr_SetString(PyExc_ValueError, "resample_means: this CPU (or build) has no avx512 kernel; see resample_kernels()");
        return NULL;
    }
    PyErr_Format(PyExc_ValueError, "resample_means: unknown kernel %s (auto, scalar, avx512)", name);
    return NULL;
}

static PyObject *resample_kernels(PyObject *self, PyObject *noargs) {
#ifdef BOOT_AVX512
    if (boot_has_avx512()) return Py_BuildValue("(ss)", "avx512", "scalar");
#endif
    return Py_BuildValue("(s)", "scalar");
}

static PyObject *resample_means(PyObject *self, PyObject *args) {
    PyObject *d_o, *out_o;
    unsigned long long key, key_r;
    long long first;
    const char *kernel_name = "auto";
    if (!PyArg_ParseTuple(args, "OKKLO|s:resample_means", &d_o, &key, &key_r, &first, &out_o, &kernel_name)) return NULL;
    if (first < 0) { PyErr_SetString(PyExc_ValueError, "first must be >= 0"); return NULL; }
    boot_kernel kernel = boot_kernel_named(kernel_name);
    if (kernel == NULL) return NULL;
    Py_buffer d, out;
    if (get_buffer(d_o, &d, "d", "d") < 0) return NULL;
    if (PyObject_GetBuffer(out_o, &out, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE) < 0) { PyBuffer_Release(&d); return NULL; }
    const char *f = out.format ? out.format : "B";
    Py_ssize_t n = d.len / 8, k = out.len / 8;
    if (out.itemsize != 8 || f[strlen(f) - 1] != 'd' || n < 1 || n >= ((Py_ssize_t)1 << 31)) {
        PyBuffer_Release(&d); PyBuffer_Release(&out);
        PyErr_SetString(PyExc_TypeError, "d must hold 1 to 2**31 - 1 float64 values and out must be a writable float64 array");
        return NULL;
    }
    const double *v = (const double *)d.buf;
    double *o = (double *)out.buf;
    Py_BEGIN_ALLOW_THREADS
    kernel(v, (uint64_t)n, (uint64_t)key, (uint64_t)key_r, (uint64_t)first, o, k);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&d);
    PyBuffer_Release(&out);
    Py_RETURN_NONE;
}


/* ---- token F1: the plain rows of a JSONL file, read, tokenized, counted and written in one pass (goldeval.freetext
 * .scorer.TokenF1.line_kernel; the Python path there, decode_line + score_row, stays the definition and the
 * fallback: it handles every line this kernel leaves to it, and tests/unit/test_freetext_lines.py checks the two
 * agree byte for byte) ---- */

/* A plain line: only ASCII bytes; one JSON object (RFC 8259 grammar, JSON white space around it, nesting at most
 * F1_DEPTH) whose id field is a string (escapes allowed, decoding to ASCII, at least one character 0x21..0x7e, and its
 * JSON holding neither ',' nor "null": such ids go to the store as rows, see engines/local.py) or an integer of at
 * most 18 digits (not -0), whose two text fields are strings decoding to ASCII, and in which none of the three
 * fields occurs twice. Any other line is left to Python. */
#define F1_DEPTH 64

typedef struct { const unsigned char *p, *end; } Cur;

static inline void f1_ws(Cur *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) c->p++;
}

static inline int hexval(unsigned char h) {
    if (h >= '0' && h <= '9') return h - '0';
    if (h >= 'a' && h <= 'f') return h - 'a' + 10;
    if (h >= 'A' && h <= 'F') return h - 'A' + 10;
    return -1;
}

/* A JSON string at c->p (its opening quote), decoded into out (when out is not NULL; room: the string's bytes), with
 * A-Z lowered when lower. Returns its decoded length, or -1 when it is not a string this kernel reads (a control
 * byte, a byte >= 0x80, a bad escape, or, when decoded, an escape of a code point >= 0x80). */
static Py_ssize_t f1_string(Cur *c, unsigned char *out, int lower) {
    const unsigned char *p = c->p, *end = c->end;
    if (p >= end || *p != '"') return -1;
    p++;
    Py_ssize_t n = 0;
    for (;;) {
#if defined(__SSE2__)
        /* 16 plain bytes at a time (no quote, backslash, control byte or byte >= 0x80), copied lowered. The store
         * may write up to 16 bytes past what is kept: out has room for the whole line (n <= bytes read so far). */
        while (end - p >= 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)p);
            __m128i sp = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
                                      _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));  /* (signed: bytes >= 0x80 are < 0x20) */
            int m = _mm_movemask_epi8(sp);
            if (out) {
                __m128i o = v;
                if (lower) {
                    __m128i up = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('A' - 1)), _mm_cmplt_epi8(v, _mm_set1_epi8('Z' + 1)));
                    o = _mm_add_epi8(v, _mm_and_si128(up, _mm_set1_epi8(32)));
                }
                _mm_storeu_si128((__m128i *)(out + n), o);
            }
            if (m) { int k = __builtin_ctz((unsigned)m); n += k; p += k; break; }
            n += 16; p += 16;
        }
#endif
        if (p >= end) return -1;
        unsigned char ch = *p;
        if (ch == '"') { p++; break; }
        if (ch < 0x20) return -1;
        if (ch == '\\') {
            if (p + 1 >= end) return -1;
            unsigned char e = p[1];
            p += 2;
            switch (e) {
            case '"': ch = '"'; break;
            case '\\': ch = '\\'; break;
            case '/': ch = '/'; break;
            case 'b': ch = '\b'; break;
            case 'f': ch = '\f'; break;
            case 'n': ch = '\n'; break;
            case 'r': ch = '\r'; break;
            case 't': ch = '\t'; break;
            case 'u': {
                if (p + 4 > end) return -1;
                int a = hexval(p[0]), b = hexval(p[1]), d = hexval(p[2]), f = hexval(p[3]);
                if (a < 0 || b < 0 || d < 0 || f < 0) return -1;
                int cp = (a << 12) | (b << 8) | (d << 4) | f;
                if (cp >= 0x80) {
                    if (out) return -1;
                    cp = 0;  /* (a value only skipped: any escape; the lenient reading takes lone surrogates too) */
                }
                ch = (unsigned char)cp;
                p += 4;
                break;
            }
            default: return -1;
            }
        } else {
            if (ch >= 0x80) return -1;
            p++;
        }
        if (out) out[n] = (lower && ch >= 'A' && ch <= 'Z') ? (unsigned char)(ch + 32) : ch;
        n++;
    }
    c->p = p;
    return n;
}

static int f1_number(Cur *c) {
    const unsigned char *p = c->p, *end = c->end;
    if (p < end && *p == '-') p++;
    if (p >= end) return -1;
    if (*p == '0') p++;
    else if (*p >= '1' && *p <= '9') { while (p < end && *p >= '0' && *p <= '9') p++; }
    else return -1;
    if (p < end && *p == '.') {
        p++;
        if (p >= end || !(*p >= '0' && *p <= '9')) return -1;
        while (p < end && *p >= '0' && *p <= '9') p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < end && (*p == '+' || *p == '-')) p++;
        if (p >= end || !(*p >= '0' && *p <= '9')) return -1;
        while (p < end && *p >= '0' && *p <= '9') p++;
    }
    c->p = p;
    return 0;
}

/* Skip one JSON value (validated); -1 when it is not one this kernel reads. */
static int f1_skip(Cur *c, int depth) {
    if (c->p >= c->end) return -1;
    unsigned char ch = *c->p;
    if (ch == '"') return f1_string(c, NULL, 0) < 0 ? -1 : 0;
    if (ch == '-' || (ch >= '0' && ch <= '9')) return f1_number(c);
    if (ch == 't' || ch == 'f' || ch == 'n') {
        const char *w = ch == 't' ? "true" : ch == 'f' ? "false" : "null";
        size_t k = strlen(w);
        if ((size_t)(c->end - c->p) < k || memcmp(c->p, w, k) != 0) return -1;
        c->p += k;
        return 0;
    }
    if (depth >= F1_DEPTH) return -1;
    if (ch == '[') {
        c->p++;
        f1_ws(c);
        if (c->p < c->end && *c->p == ']') { c->p++; return 0; }
        for (;;) {
            f1_ws(c);
            if (f1_skip(c, depth + 1) < 0) return -1;
            f1_ws(c);
            if (c->p >= c->end) return -1;
            if (*c->p == ',') { c->p++; continue; }
            if (*c->p == ']') { c->p++; return 0; }
            return -1;
        }
    }
    if (ch == '{') {
        c->p++;
        f1_ws(c);
        if (c->p < c->end && *c->p == '}') { c->p++; return 0; }
        for (;;) {
            f1_ws(c);
            if (f1_string(c, NULL, 0) < 0) return -1;
            f1_ws(c);
            if (c->p >= c->end || *c->p != ':') return -1;
            c->p++;
            f1_ws(c);
            if (f1_skip(c, depth + 1) < 0) return -1;
            f1_ws(c);
            if (c->p >= c->end) return -1;
            if (*c->p == ',') { c->p++; continue; }
            if (*c->p == '}') { c->p++; return 0; }
            return -1;
        }
    }
    return -1;
}

/* A double in [0, 1] as orjson.dumps writes it: the shortest round-trip digits (those of repr), in decimal notation
 * from 1e-5 on ("0.00001", "0.25", "1.0"), below as d.ddde-N ("2.5e-7"). -1 for any other value (none occurs). */
typedef struct { uint64_t bits; int len; char s[28]; } ScoreText;
#define SCORE_CACHE 8192
static ScoreText score_cache[SCORE_CACHE];  /* the text of recent values by their bits (bits 0: an empty slot) */

static int put_score(Buf *b, double x) {
    if (!(x >= 0.0 && x <= 1.0)) return -1;
    if (x == 0.0) return buf_put(b, "0.0", 3);
    if (x == 1.0) return buf_put(b, "1.0", 3);
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    ScoreText *memo = &score_cache[(bits ^ (bits >> 29) ^ (bits >> 41)) & (SCORE_CACHE - 1)];
    if (memo->bits == bits) return buf_put(b, memo->s, memo->len);
    char *r = PyOS_double_to_string(x, 'r', 0, 0, NULL);  /* "0.00ddd" (x >= 1e-4) or "d[.ddd]e-NN" */
    if (!r) return -1;
    char digits[32];
    int nd = 0, e;
    const char *q = r, *ep = strchr(r, 'e');
    if (ep) {  /* the first digit stands at 10**e */
        for (; q < ep; q++) if (*q != '.' && nd < 31) digits[nd++] = *q;
        e = atoi(ep + 1);
    } else {
        q = strchr(r, '.');
        int z = 0;
        if (!q) { PyMem_Free(r); return -1; }
        q++;
        while (*q == '0') { z++; q++; }
        for (; *q && nd < 31; q++) digits[nd++] = *q;
        e = -(z + 1);
    }
    PyMem_Free(r);
    if (nd == 0) return -1;
    char out[64];
    int k = 0;
    if (e >= -5) {  /* (e < 0: x < 1) */
        out[k++] = '0'; out[k++] = '.';
        for (int z = 0; z < -e - 1; z++) out[k++] = '0';
        for (int z = 0; z < nd; z++) out[k++] = digits[z];
    } else {
        out[k++] = digits[0];
        if (nd > 1) { out[k++] = '.'; for (int z = 1; z < nd; z++) out[k++] = digits[z]; }
        k += snprintf(out + k, sizeof out - k, "e%d", e);
    }
    if (k <= (int)sizeof memo->s) { memo->bits = bits; memo->len = k; memcpy(memo->s, out, k); }
    return buf_put(b, out, k);
}

/* An ASCII text as orjson.dumps writes it (between quotes; '"' and '\\' escaped, control characters as \b \t \n \f
 * \r or \u00xx, DEL as is). */
static int put_ascii_json(Buf *b, const unsigned char *s, Py_ssize_t n) {
    static const char hex[] = "0123456789abcdef";
    if (buf_put(b, "\"", 1) < 0) return -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char ch = s[i];
        char esc[6];
        int k = 0;
        if (ch == '"' || ch == '\\') { esc[0] = '\\'; esc[1] = (char)ch; k = 2; }
        else if (ch < 0x20) {
            esc[0] = '\\'; k = 2;
            switch (ch) {
            case '\b': esc[1] = 'b'; break;
            case '\t': esc[1] = 't'; break;
            case '\n': esc[1] = 'n'; break;
            case '\f': esc[1] = 'f'; break;
            case '\r': esc[1] = 'r'; break;
            default: esc[1] = 'u'; esc[2] = '0'; esc[3] = '0'; esc[4] = hex[ch >> 4]; esc[5] = hex[ch & 15]; k = 6;
            }
        }
        if (k) { if (buf_put(b, esc, k) < 0) return -1; }
        else {
            Py_ssize_t j = i;
            while (j < n && s[j] >= 0x20 && s[j] != '"' && s[j] != '\\') j++;
            if (buf_put(b, (const char *)s + i, j - i) < 0) return -1;
            i = j - 1;
        }
    }
    return buf_put(b, "\"", 1);
}

/* Exact sums of one metric's values by denominator, as ExactSum keeps them: value = n / 2**k (lowest terms). */
#define F1_DENOMS 1075
typedef struct { unsigned __int128 num[F1_DENOMS]; unsigned char used[F1_DENOMS]; } Ratios;

static inline void ratio_add(Ratios *r, double x) {
    if (x == 0.0) { r->used[0] = 1; return; }  /* 0.0.as_integer_ratio() == (0, 1) */
    int e;
    double f = frexp(x, &e);                      /* x = f * 2**e, 0.5 <= f < 1 */
    uint64_t m = (uint64_t)ldexp(f, 53);
    int k = 53 - e;                               /* x = m / 2**k */
    int tz = __builtin_ctzll(m);
    if (tz > k) tz = k;
    m >>= tz; k -= tz;
    if (k < 0) { m <<= -k; k = 0; }               /* (x >= 2: never here) */
    r->num[k] += m;
    r->used[k] = 1;
}

static PyObject *u128_long(unsigned __int128 v) {
    PyObject *hi = PyLong_FromUnsignedLongLong((unsigned long long)(v >> 64));
    PyObject *lo = PyLong_FromUnsignedLongLong((unsigned long long)v);
    PyObject *s = PyLong_FromLong(64), *r = NULL;
    if (hi && lo && s) {
        PyObject *t = PyNumber_Lshift(hi, s);
        if (t) { r = PyNumber_Or(t, lo); Py_DECREF(t); }
    }
    Py_XDECREF(hi); Py_XDECREF(lo); Py_XDECREF(s);
    return r;
}

/* [(2**k, numerator), ...] of the denominators used. */
static PyObject *ratios_list(const Ratios *r) {
    PyObject *out = PyList_New(0);
    if (!out) return NULL;
    for (int k = 0; k < F1_DENOMS; k++) {
        if (!r->used[k]) continue;
        PyObject *one = PyLong_FromLong(1), *kk = PyLong_FromLong(k);
        PyObject *d = (one && kk) ? PyNumber_Lshift(one, kk) : NULL;
        Py_XDECREF(one); Py_XDECREF(kk);
        PyObject *n = d ? u128_long(r->num[k]) : NULL;
        PyObject *pair = n ? PyTuple_Pack(2, d, n) : NULL;
        Py_XDECREF(d); Py_XDECREF(n);
        if (!pair || PyList_Append(out, pair) < 0) { Py_XDECREF(pair); Py_DECREF(out); return NULL; }
        Py_DECREF(pair);
    }
    return out;
}

typedef struct { uint64_t h; Py_ssize_t start, len; } Tok;
typedef struct { uint64_t h; const unsigned char *ptr; Py_ssize_t len, count; uint32_t gen; } F1Slot;

typedef struct {
    unsigned char *ref, *pred;  /* decoded, lowered texts */
    Py_ssize_t ref_cap, pred_cap;
    unsigned char *key, *idb;  /* a decoded key, the decoded id */
    Py_ssize_t key_cap, idb_cap;
    Tok *toks;
    Py_ssize_t tok_cap;
    uint64_t *masks;
    Py_ssize_t masks_cap;
    F1Slot *table;
    size_t table_cap;
    uint32_t gen;
} F1Work;

/* (PyMem_Raw*: called without the GIL, so no error is set; -1 means no memory) */
static int grow(void **p, Py_ssize_t *cap, Py_ssize_t need, size_t item) {
    if (need <= *cap) return 0;
    Py_ssize_t c = *cap ? *cap : 256;
    while (c < need) c *= 2;
    void *q = PyMem_RawRealloc(*p, (size_t)c * item);
    if (!q) return -1;
    *p = q; *cap = c;
    return 0;
}

/* A token's hash a word (8 bytes) at a time; the buffer must be readable 8 bytes past the token (masked off). */
static inline uint64_t word_hash(const unsigned char *p, Py_ssize_t len) {
    uint64_t h = (uint64_t)len * 0x9E3779B97F4A7C15ULL, v;
    while (len >= 8) {
        memcpy(&v, p, 8);
        h = (h ^ v) * 0xff51afd7ed558ccdULL;
        h ^= h >> 32;
        p += 8; len -= 8;
    }
    if (len) {
        memcpy(&v, p, 8);
        v &= ~0ULL >> (64 - 8 * len);
        h = (h ^ v) * 0xff51afd7ed558ccdULL;
        h ^= h >> 32;
    }
    return h ^ (h >> 29);
}

/* Whether two tokens of len bytes are equal, a word at a time (both readable 8 bytes past their end). */
static inline int tok_eq(const unsigned char *a, const unsigned char *b, Py_ssize_t len) {
    uint64_t x, y;
    while (len >= 8) {
        memcpy(&x, a, 8); memcpy(&y, b, 8);
        if (x != y) return 0;
        a += 8; b += 8; len -= 8;
    }
    if (!len) return 1;
    memcpy(&x, a, 8); memcpy(&y, b, 8);
    return ((x ^ y) & (~0ULL >> (64 - 8 * len))) == 0;
}

/* Bit j of the 64-byte block at b (n <= 64 bytes): its byte is a letter or digit (a-z0-9) in *alnum, a joiner
 * (. ' / -) in *join. */
static inline void block_masks(const unsigned char *b, Py_ssize_t n, uint64_t *alnum, uint64_t *join) {
    uint64_t A = 0, J = 0;
    Py_ssize_t j = 0;
#if defined(__SSE2__)
    for (; j + 16 <= n; j += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(b + j));
        __m128i az = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('a' - 1)), _mm_cmplt_epi8(v, _mm_set1_epi8('z' + 1)));
        __m128i d = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('0' - 1)), _mm_cmplt_epi8(v, _mm_set1_epi8('9' + 1)));
        __m128i jn = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('.')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\''))),
                                  _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('/')), _mm_cmpeq_epi8(v, _mm_set1_epi8('-'))));
        A |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_or_si128(az, d)) << j;
        J |= (uint64_t)(unsigned)_mm_movemask_epi8(jn) << j;
    }
#endif
    for (; j < n; j++) {
        A |= (uint64_t)is_alnum(b[j]) << j;
        J |= (uint64_t)is_joiner(b[j]) << j;
    }
    *alnum = A; *join = J;
}

/* The tokens of a lowered ASCII text under the openscribe rule, as (start, length) into w->toks (count returned;
 * -1: no memory): a byte is in a token when it is a letter or digit, or a joiner with a letter or digit on both
 * sides (the leftmost-greedy matches of [a-z0-9]+(?:[.'/-][a-z0-9]+)* are exactly the maximal runs of such bytes),
 * found 64 bytes at a time by bit masks. Hashes are filled in (word_hash). */
static Py_ssize_t token_spans(F1Work *w, const unsigned char *b, Py_ssize_t n) {
    Py_ssize_t nw = (n + 63) / 64, k, count = 0;
    if (grow((void **)&w->masks, &w->masks_cap, 2 * nw + 2, sizeof(uint64_t)) < 0) return -1;
    if (grow((void **)&w->toks, &w->tok_cap, n / 2 + 2, sizeof(Tok)) < 0) return -1;
    uint64_t *A = w->masks, *J = w->masks + nw + 1;
    for (k = 0; k < nw; k++) {
        Py_ssize_t m = n - 64 * k;
        block_masks(b + 64 * k, m < 64 ? m : 64, &A[k], &J[k]);
    }
    A[nw] = 0;
    /* in-token bits, then each run's first and last bit */
    uint64_t prevA = 0, prevT = 0, T = 0, nextT;
    Tok *toks = w->toks;
    Py_ssize_t open = -1;
    for (k = 0; k <= nw; k++) {
        /* T of block k is computed one step ahead, so that a run's last bit can look at the next block's first */
        uint64_t Tk = 0;
        if (k < nw) {
            uint64_t a = A[k], left = (a << 1) | (prevA >> 63), right = (a >> 1) | (A[k + 1] << 63);
            Tk = a | (J[k] & left & right);
            prevA = a;
        }
        if (k > 0) {
            nextT = Tk;
            uint64_t starts = T & ~((T << 1) | (prevT >> 63));
            uint64_t ends = T & ~((T >> 1) | (nextT << 63));
            Py_ssize_t base = 64 * (k - 1);
            while (starts | ends) {
                /* runs alternate: a start (if a run is not open) then its end */
                if (open < 0) {
                    if (!starts) break;
                    int j = __builtin_ctzll(starts);
                    starts &= starts - 1;
                    open = base + j;
                } else {
                    if (!ends) break;
                    int j = __builtin_ctzll(ends);
                    ends &= ends - 1;
                    Py_ssize_t st = open, ln = base + j - open + 1;
                    toks[count].start = st; toks[count].len = ln; toks[count].h = word_hash(b + st, ln);
                    count++;
                    open = -1;
                }
            }
            prevT = T;
        }
        T = Tk;
    }
    return count;
}

/* (n_pred, n_ref, n_overlap) of two lowered ASCII texts under the openscribe rule (as overlap_counts); each text
 * readable 8 bytes past its end. -1: no memory. */
static int f1_counts(F1Work *w, const unsigned char *pb, Py_ssize_t np_, const unsigned char *rb, Py_ssize_t nr_,
                     Py_ssize_t out[3]) {
    Py_ssize_t n_ref = token_spans(w, rb, nr_), n_pred = 0, n_overlap = 0;
    if (n_ref < 0) return -1;
    if (n_ref) {
        size_t cap = 16;
        while (cap < (size_t)(2 * n_ref)) cap <<= 1;
        if (cap > w->table_cap) {
            PyMem_RawFree(w->table);
            w->table = (F1Slot *)PyMem_RawCalloc(cap, sizeof(F1Slot));
            if (!w->table) { w->table_cap = 0; return -1; }
            w->table_cap = cap;
            w->gen = 0;
        }
        if (++w->gen == 0) {  /* (wrapped: clear the stamps) */
            memset(w->table, 0, w->table_cap * sizeof(F1Slot));
            w->gen = 1;
        }
        uint32_t gen = w->gen;
        size_t mask = cap - 1;  /* (the first cap slots of the table) */
        F1Slot *table = w->table;
        for (Py_ssize_t t = 0; t < n_ref; t++) {
            const Tok *tk = &w->toks[t];
            size_t j = (size_t)tk->h & mask;
            for (;;) {
                F1Slot *sl = &table[j];
                if (sl->gen != gen) { sl->gen = gen; sl->ptr = rb + tk->start; sl->len = tk->len; sl->h = tk->h; sl->count = 1; break; }
                if (sl->h == tk->h && sl->len == tk->len && tok_eq(sl->ptr, rb + tk->start, tk->len)) { sl->count++; break; }
                j = (j + 1) & mask;
            }
        }
        n_pred = token_spans(w, pb, np_);
        if (n_pred < 0) return -1;
        for (Py_ssize_t t = 0; t < n_pred; t++) {
            const Tok *tk = &w->toks[t];
            size_t j = (size_t)tk->h & mask;
            for (;;) {
                F1Slot *sl = &table[j];
                if (sl->gen != gen) break;
                if (sl->h == tk->h && sl->len == tk->len && tok_eq(sl->ptr, pb + tk->start, tk->len)) {
                    if (sl->count > 0) { sl->count--; n_overlap++; }
                    break;
                }
                j = (j + 1) & mask;
            }
        }
    } else {
        n_pred = token_spans(w, pb, np_);
        if (n_pred < 0) return -1;
    }
    out[0] = n_pred; out[1] = n_ref; out[2] = n_overlap;
    return 0;
}

/*
 * f1_lines(block, pos, lineno, id_key, pred_key, ref_key, emit) -> (pos, lineno, n, body, records, ids, (f1, precision, recall))
 *
 * Scores the lines of block[pos:] (bytes of lines, each ending after a newline, the last one perhaps without; lineno
 * = the number of the line at pos) while each is a plain line (above) or blank (only ASCII white space, as
 * bytes.isspace() reads it: skipped, counted), and stops at the first that is neither (pos and lineno: its start and
 * number; len(block) at the end). Each plain line is scored as
 * goldeval.freetext.scorer.score_row scores it under the openscribe rule, and n counts them. ids: the JSON of their
 * ids (orjson.dumps of the id text), comma-separated. With emit bit 1, body holds each one's per_example entry
 * {"id","line","whole_note":{"precision","recall","f1"},"tokens":{"prediction","reference","overlap"}} as orjson.dumps
 * writes it, each followed by a newline; with bit 2, records holds each one's run-store record (the same with
 * "status":"scored" first), newline-separated. The last item: for f1, precision and recall, the exact sum of the n
 * values as [(2**k, numerator), ...] (ExactSum.add_ratios). The keys are UTF-8 bytes.
 */
/* One plain line as the first phase of f1_lines leaves it for the second: its number, its id's JSON in the ids
 * buffer (ids.p[id0:id1]) and its token counts (prediction, reference, overlap). */
typedef struct { Py_ssize_t lineno, id0, id1, cnt[3]; } F1Line;

static PyObject *f1_lines(PyObject *self, PyObject *args) {
    Py_buffer blk;
    Py_ssize_t pos, lineno;
    const char *want[3];
    Py_ssize_t want_n[3];
    int emit;
    if (!PyArg_ParseTuple(args, "y*nny#y#y#i:f1_lines", &blk, &pos, &lineno, &want[0], &want_n[0], &want[1],
                          &want_n[1], &want[2], &want_n[2], &emit))
        return NULL;
    const unsigned char *base = (const unsigned char *)blk.buf;
    Py_ssize_t end = blk.len, n = 0;
    if (pos < 0 || pos > end) { PyBuffer_Release(&blk); PyErr_SetString(PyExc_ValueError, "f1_lines: pos out of range"); return NULL; }
    Buf body = {NULL, 0, 0, 0}, recs = {NULL, 0, 0, 0}, ids = {NULL, 0, 0, 1}, one = {NULL, 0, 0, 0};
    F1Work w;
    memset(&w, 0, sizeof w);
    F1Line *lines = NULL;
    Py_ssize_t lines_cap = 0;
    int nomem = 0;
    Ratios *sums = (Ratios *)PyMem_Calloc(3, sizeof(Ratios));
    PyObject *result = NULL;
    if (!sums) { PyBuffer_Release(&blk); PyErr_NoMemory(); return NULL; }
    /* First phase, without the GIL (other threads run Python meanwhile, e.g. another chunk's second phase): read,
     * decode, tokenize and count each plain line, up to the first line that is neither plain nor blank. Nothing here
     * touches a Python object (the block is a bytes object's buffer, held; memory is PyMem_Raw*). */
    Py_BEGIN_ALLOW_THREADS
    while (pos < end) {
        const unsigned char *s = base + pos, *nl = (const unsigned char *)memchr(s, '\n', (size_t)(end - pos));
        Py_ssize_t len = nl ? (nl - s) + 1 : end - pos, j = 0;
        while (j < len && (s[j] == ' ' || s[j] == '\n' || s[j] == '\t' || s[j] == '\r' || s[j] == '\v' || s[j] == '\f')) j++;
        if (j == len) { pos += len; lineno++; continue; }  /* a blank line (bytes.isspace): not a row */
        Cur c = {s, s + len};
        const unsigned char *at[3] = {NULL, NULL, NULL};  /* each field's value */
        Py_ssize_t got[3] = {-1, -1, -1};  /* the decoded length of each field that is a string */
        int ok = 0;
        /* (room for any decoded string of the line, and 8 bytes more for the hash's word loads) */
        if (grow((void **)&w.key, &w.key_cap, len + 8, 1) < 0 || grow((void **)&w.idb, &w.idb_cap, len + 8, 1) < 0
            || grow((void **)&w.pred, &w.pred_cap, len + 8, 1) < 0 || grow((void **)&w.ref, &w.ref_cap, len + 8, 1) < 0
            || grow((void **)&lines, &lines_cap, n + 1, sizeof(F1Line)) < 0) {
            nomem = 1;
            break;
        }
        unsigned char *dest[3] = {w.idb, w.pred, w.ref};
        f1_ws(&c);
        if (c.p >= c.end || *c.p != '{') break;
        c.p++;
        f1_ws(&c);
        if (c.p < c.end && *c.p == '}') break;  /* (no field: Python says which is missing) */
        for (;;) {
            f1_ws(&c);
            Py_ssize_t kn = f1_string(&c, w.key, 0);
            if (kn < 0) break;
            int which = -1, matches = 0;
            for (int j = 0; j < 3; j++)
                if (kn == want_n[j] && memcmp(w.key, want[j], kn) == 0) { which = j; matches++; }
            if (matches > 1 || (which >= 0 && at[which])) break;  /* (one name for two fields; a field twice) */
            f1_ws(&c);
            if (c.p >= c.end || *c.p != ':') break;
            c.p++;
            f1_ws(&c);
            if (which >= 0) {
                at[which] = c.p;
                if (c.p < c.end && *c.p == '"') {  /* decoded (the texts lowered) as it is read */
                    got[which] = f1_string(&c, dest[which], which > 0);
                    if (got[which] < 0) break;
                } else if (which > 0) break;  /* (a text that is not a string: Python says why) */
                else if (f1_skip(&c, 1) < 0) break;
            } else if (f1_skip(&c, 1) < 0) break;
            f1_ws(&c);
            if (c.p >= c.end) break;
            if (*c.p == ',') { c.p++; continue; }
            if (*c.p == '}') { c.p++; f1_ws(&c); ok = c.p == c.end; break; }
            break;
        }
        if (!ok || !at[0] || !at[1] || !at[2]) break;
        /* the whole line is ASCII (a byte >= 0x80 outside a string is refused by the grammar; inside, by f1_string) */
        /* the id: a string, or an integer of at most 18 digits */
        Py_ssize_t id0 = ids.n;
        if (got[0] >= 0) {
            Py_ssize_t idn = got[0];
            int visible = 0;
            for (Py_ssize_t j = 0; j < idn; j++) if (w.idb[j] > 0x20 && w.idb[j] < 0x7f) { visible = 1; break; }
            if (!visible) break;  /* (blank: Python refuses it) */
            if (put_ascii_json(&ids, w.idb, idn) < 0) { nomem = 1; break; }
        } else {
            const unsigned char *p = at[0];
            if (*p == '-') p++;
            const unsigned char *d0 = p;
            while (p < s + len && *p >= '0' && *p <= '9') p++;
            Py_ssize_t nd = p - d0;
            if (nd == 0 || nd > 18 || (p < s + len && (*p == '.' || *p == 'e' || *p == 'E'))) break;
            if (at[0][0] == '-' && nd == 1 && *d0 == '0') break;  /* -0 is the id "0" */
            if (buf_put(&ids, "\"", 1) < 0 || buf_put(&ids, (const char *)at[0], p - at[0]) < 0 || buf_put(&ids, "\"", 1) < 0) {
                nomem = 1;
                break;
            }
        }
        {
            Py_ssize_t idl = ids.n - id0;
            int bad = memchr(ids.p + id0, ',', idl) != NULL;
            for (Py_ssize_t j = id0; !bad && j + 4 <= ids.n; j++) if (memcmp(ids.p + j, "null", 4) == 0) bad = 1;
            if (bad) { ids.n = id0; break; }
        }
        /* the texts */
        F1Line *ln = &lines[n];
        if (f1_counts(&w, w.pred, got[1], w.ref, got[2], ln->cnt) < 0) { ids.n = id0; nomem = 1; break; }
        ln->lineno = lineno;
        ln->id0 = id0;
        ln->id1 = ids.n;
        if (buf_put(&ids, ",", 1) < 0) { nomem = 1; break; }
        n++;
        pos += len;
        lineno++;
    }
    Py_END_ALLOW_THREADS
    if (nomem) { PyErr_NoMemory(); goto done; }
    /* Second phase, with the GIL (put_score's shortest digits and its cache): each line's scores, entry, record and
     * exact sums, in order. */
    for (Py_ssize_t i = 0; i < n; i++) {
        const F1Line *ln = &lines[i];
        const Py_ssize_t *cnt = ln->cnt;
        double prec, rec, f1;
        Py_ssize_t ov = cnt[2];
        if (cnt[0] == 0 || cnt[1] == 0) { prec = rec = f1 = (cnt[0] == cnt[1]) ? 1.0 : 0.0; ov = 0; }
        else if (ov == 0) { prec = rec = f1 = 0.0; }
        else {
            prec = (double)ov / (double)cnt[0];
            rec = (double)ov / (double)cnt[1];
            f1 = 2 * prec * rec / (prec + rec);
        }
        /* the entry after its id: ,"line":N,"whole_note":{...},"tokens":{...}} */
        one.n = 0;
        char num[32];
        Buf nb = {num, 0, (Py_ssize_t)sizeof num, 0};
        put_num(&nb, ln->lineno);
        if (buf_put(&one, ",\"line\":", 8) < 0 || buf_put(&one, num, nb.n) < 0
            || buf_put(&one, ",\"whole_note\":{\"precision\":", 27) < 0 || put_score(&one, prec) < 0
            || buf_put(&one, ",\"recall\":", 10) < 0 || put_score(&one, rec) < 0
            || buf_put(&one, ",\"f1\":", 6) < 0 || put_score(&one, f1) < 0
            || buf_put(&one, "},\"tokens\":{\"prediction\":", 25) < 0) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "f1_lines: a score outside [0, 1]");
            goto done;
        }
        nb.n = 0; put_num(&nb, cnt[0]);
        if (buf_put(&one, num, nb.n) < 0 || buf_put(&one, ",\"reference\":", 13) < 0) goto done;
        nb.n = 0; put_num(&nb, cnt[1]);
        if (buf_put(&one, num, nb.n) < 0 || buf_put(&one, ",\"overlap\":", 11) < 0) goto done;
        nb.n = 0; put_num(&nb, ov);
        if (buf_put(&one, num, nb.n) < 0 || buf_put(&one, "}}", 2) < 0) goto done;
        if (emit & 1) {
            if (buf_put(&body, "{\"id\":", 6) < 0 || buf_put(&body, ids.p + ln->id0, ln->id1 - ln->id0) < 0
                || buf_put(&body, one.p, one.n) < 0 || buf_put(&body, "\n", 1) < 0) goto done;
        }
        if (emit & 2) {
            if ((recs.n && buf_put(&recs, "\n", 1) < 0) || buf_put(&recs, "{\"status\":\"scored\",\"id\":", 24) < 0
                || buf_put(&recs, ids.p + ln->id0, ln->id1 - ln->id0) < 0 || buf_put(&recs, one.p, one.n) < 0) goto done;
        }
        ratio_add(&sums[0], f1);
        ratio_add(&sums[1], prec);
        ratio_add(&sums[2], rec);
    }
    {
        PyObject *a = ratios_list(&sums[0]), *b = a ? ratios_list(&sums[1]) : NULL, *d = b ? ratios_list(&sums[2]) : NULL;
        if (!d) { Py_XDECREF(a); Py_XDECREF(b); goto done; }
        result = Py_BuildValue("nnny#y#y#(NNN)", pos, lineno, n, body.p ? body.p : "", body.n, recs.p ? recs.p : "", recs.n,
                               ids.p ? ids.p : "", ids.n ? ids.n - 1 : 0, a, b, d);
    }
done:
    PyMem_Free(body.p); PyMem_Free(recs.p); PyMem_RawFree(ids.p); PyMem_Free(one.p); PyMem_RawFree(lines);
    PyMem_RawFree(w.ref); PyMem_RawFree(w.pred); PyMem_RawFree(w.key); PyMem_RawFree(w.idb); PyMem_RawFree(w.toks);
    PyMem_RawFree(w.masks); PyMem_RawFree(w.table);
    PyMem_Free(sums);
    PyBuffer_Release(&blk);
    return result;
}

/* ---- a run store block's records as codes (goldeval.runs.blocks FORMAT_CODED_STATUS_FIRST; the JSON-lines block,
 * format 1, stays the definition and the fallback: tests/unit/test_runs_blocks.py reads both back the same) ---- */

/* The tails met so far by one recorder (a capsule from tail_table): tail bytes (held in the Python list the caller
 * passes, code order) by a 64-bit hash, open addressing. */
typedef struct { uint64_t *hash; uint32_t *code; Py_ssize_t size, used; } TailTable;

static void tail_table_free(PyObject *cap) {
    TailTable *t = (TailTable *)PyCapsule_GetPointer(cap, "goldeval._fast.TailTable");
    if (t) { PyMem_Free(t->hash); PyMem_Free(t->code); PyMem_Free(t); }
}

/* tail_table() -> capsule: code_records' table of tails for one recorder. */
static PyObject *tail_table(PyObject *self, PyObject *args) {
    TailTable *t = (TailTable *)PyMem_Calloc(1, sizeof(TailTable));
    if (!t) return PyErr_NoMemory();
    PyObject *cap = PyCapsule_New(t, "goldeval._fast.TailTable", tail_table_free);
    if (!cap) PyMem_Free(t);
    return cap;
}

static uint64_t tail_hash(const unsigned char *s, Py_ssize_t n) {  /* 8 bytes a step */
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (uint64_t)n, w;
    Py_ssize_t i = 0;
    for (; i + 8 <= n; i += 8) {
        memcpy(&w, s + i, 8);
        h = (h ^ w) * 0xFF51AFD7ED558CCDULL;
        h ^= h >> 32;
    }
    w = 0;
    memcpy(&w, s + i, (size_t)(n - i));
    h = (h ^ w) * 0xC4CEB9FE1A85EC53ULL;
    return h ^ (h >> 29);
}

/* The code of tail s[0:n] in t (known[code] holds its bytes); a new tail is appended to known with the next code.
 * -1: an error (set); -2: a new tail past cap. */
static Py_ssize_t tail_code(TailTable *t, PyObject *known, const unsigned char *s, Py_ssize_t n, Py_ssize_t cap) {
    uint64_t h = tail_hash(s, n);
    if (t->size) {
        Py_ssize_t mask = t->size - 1, i = (Py_ssize_t)(h & (uint64_t)mask);
        while (t->code[i] != UINT32_MAX) {
            if (t->hash[i] == h) {
                if ((Py_ssize_t)t->code[i] >= PyList_GET_SIZE(known) || !PyBytes_Check(PyList_GET_ITEM(known, t->code[i]))) {
                    PyErr_SetString(PyExc_ValueError, "code_records: known is not the list of this table's tails");
                    return -1;
                }
                PyObject *b = PyList_GET_ITEM(known, t->code[i]);
                if (PyBytes_GET_SIZE(b) == n && memcmp(PyBytes_AS_STRING(b), s, n) == 0) return t->code[i];
            }
            i = (i + 1) & mask;
        }
    }
    Py_ssize_t code = PyList_GET_SIZE(known);
    if (code != t->used) {
        PyErr_SetString(PyExc_ValueError, "code_records: known is not the list of this table's tails");
        return -1;
    }
    if (code >= cap || code >= (Py_ssize_t)UINT32_MAX) return -2;
    if ((t->used + 1) * 2 > t->size) {  /* grow (and rehash) to keep the table at most half full */
        Py_ssize_t size = t->size ? t->size * 2 : 1024;
        uint64_t *hash = (uint64_t *)PyMem_Malloc(size * sizeof(uint64_t));
        uint32_t *codes = (uint32_t *)PyMem_Malloc(size * sizeof(uint32_t));
        if (!hash || !codes) { PyMem_Free(hash); PyMem_Free(codes); PyErr_NoMemory(); return -1; }
        for (Py_ssize_t i = 0; i < size; i++) codes[i] = UINT32_MAX;
        for (Py_ssize_t j = 0; j < t->size; j++) {
            if (t->code[j] == UINT32_MAX) continue;
            Py_ssize_t i = (Py_ssize_t)(t->hash[j] & (uint64_t)(size - 1));
            while (codes[i] != UINT32_MAX) i = (i + 1) & (size - 1);
            hash[i] = t->hash[j];
            codes[i] = t->code[j];
        }
        PyMem_Free(t->hash); PyMem_Free(t->code);
        t->hash = hash; t->code = codes; t->size = size;
    }
    PyObject *b = PyBytes_FromStringAndSize((const char *)s, n);
    if (!b) return -1;
    int rc = PyList_Append(known, b);
    Py_DECREF(b);
    if (rc < 0) return -1;
    Py_ssize_t i = (Py_ssize_t)(h & (uint64_t)(t->size - 1));
    while (t->code[i] != UINT32_MAX) i = (i + 1) & (t->size - 1);
    t->hash[i] = h;
    t->code[i] = (uint32_t)code;
    t->used++;
    return code;
}

/*
 * code_records(records, ids, n, table, known, cap) -> (codes, lines, used) | None
 *
 * records: n run-store records' JSON, newline-separated (no newline after the last), each
 * {"status":"scored","id":<id>,"line":<line><tail> where <id> is a JSON string (no newline), <line> an integer
 * written as str(int) writes it (no sign, no leading zero, at most 18 digits) and <tail> the rest, ',"' ... '}'.
 * ids: the same ids' JSON, comma-separated, in order (each must be the record's, byte for byte). table: a
 * tail_table() capsule; known: the list of tail bytes by code it indexes (a tail met for the first time is appended:
 * the caller checks the new ones). Returns codes (one uint32 a record, native byte order: its tail's code), lines
 * ([first, count] runs of consecutive line numbers) and used (the codes of this call, each once, in first-met
 * order). None when a record or an id is not of that form, the records are not n, or a new tail would make known
 * longer than cap (what was added to known stays: the table is never wrong, only unused).
 */
static PyObject *code_records(PyObject *self, PyObject *args) {
    Py_buffer rb, ib;
    Py_ssize_t n, cap;
    PyObject *capsule, *known;
    if (!PyArg_ParseTuple(args, "y*y*nOO!n:code_records", &rb, &ib, &n, &capsule, &PyList_Type, &known, &cap)) return NULL;
    PyObject *result = NULL, *lines = NULL, *used = NULL;
    Buf codes = {NULL, 0, 0};
    unsigned char *seen = NULL;
    TailTable *t = (TailTable *)PyCapsule_GetPointer(capsule, "goldeval._fast.TailTable");
    if (!t) goto done;
    lines = PyList_New(0);
    used = PyList_New(0);
    Py_ssize_t seen_n = cap > 0 ? cap : 1;
    seen = (unsigned char *)PyMem_Calloc(seen_n, 1);
    if (!lines || !used || !seen || n < 0) { if (!PyErr_Occurred()) PyErr_NoMemory(); goto done; }
    if (buf_reserve(&codes, 4 * n + 4) < 0) goto done;
    static const char head[] = "{\"status\":\"scored\",\"id\":\"";
    const Py_ssize_t head_n = (Py_ssize_t)sizeof head - 1;
    const unsigned char *r = (const unsigned char *)rb.buf, *rend = r + rb.len;
    const unsigned char *ids = (const unsigned char *)ib.buf;
    Py_ssize_t qi = 0, qn = ib.len;  /* the next id's offset in ids */
    Py_ssize_t k = 0, run_first = -1, run_n = 0;
    int ok = 1;
    while (ok) {
        if (k == n) { ok = r == rend + 1 || (n == 0 && rb.len == 0); break; }
        if (r >= rend) { ok = 0; break; }
        const unsigned char *nl = (const unsigned char *)memchr(r, '\n', (size_t)(rend - r));
        const unsigned char *e = nl ? nl : rend;
        if (e - r < head_n || memcmp(r, head, head_n) != 0) { ok = 0; break; }
        const unsigned char *p = r + head_n - 1, *id0 = p;  /* at the id's opening quote */
        p++;
        while (p < e && *p != '"' && *p != '\\' && *p >= 0x20) p++;  /* (an escape: not coded, orjson may spell it otherwise) */
        if (p >= e || *p != '"') { ok = 0; break; }
        p++;  /* past the closing quote */
        Py_ssize_t idn = p - id0;
        if (qn - qi < idn || memcmp(ids + qi, id0, idn) != 0 || (qi + idn < qn && ids[qi + idn] != ',')) { ok = 0; break; }
        qi += idn + 1;
        if (e - p < 9 || memcmp(p, ",\"line\":", 8) != 0) { ok = 0; break; }
        p += 8;
        const unsigned char *d0 = p;
        long long line = 0;
        while (p < e && *p >= '0' && *p <= '9' && p - d0 < 19) { if (p - d0 < 18) line = line * 10 + (*p - '0'); p++; }
        if (p == d0 || p - d0 > 18 || (*d0 == '0' && p - d0 > 1)) { ok = 0; break; }  /* (19 digits: refused) */
        if (e - p < 3 || p[0] != ',' || p[1] != '"' || e[-1] != '}') { ok = 0; break; }
        Py_ssize_t code = tail_code(t, known, p, e - p, cap);
        if (code == -1) goto done;
        if (code == -2 || code >= seen_n) { ok = 0; break; }
        if (!seen[code]) {
            seen[code] = 1;
            PyObject *c = PyLong_FromSsize_t(code);
            if (!c || PyList_Append(used, c) < 0) { Py_XDECREF(c); goto done; }
            Py_DECREF(c);
        }
        uint32_t c32 = (uint32_t)code;
        memcpy(codes.p + codes.n, &c32, 4);
        codes.n += 4;
        if (run_n && run_first + run_n == line) run_n++;
        else {
            if (run_n) {
                PyObject *pair = Py_BuildValue("[nn]", run_first, run_n);
                if (!pair || PyList_Append(lines, pair) < 0) { Py_XDECREF(pair); goto done; }
                Py_DECREF(pair);
            }
            run_first = (Py_ssize_t)line; run_n = 1;
        }
        k++;
        r = e + 1;
    }
    if (ok && qi != (n ? qn + 1 : qn)) ok = 0;  /* (every id given was a record's) */
    if (!ok) { result = Py_None; Py_INCREF(result); goto done; }
    if (run_n) {
        PyObject *pair = Py_BuildValue("[nn]", run_first, run_n);
        if (!pair || PyList_Append(lines, pair) < 0) { Py_XDECREF(pair); goto done; }
        Py_DECREF(pair);
    }
    {
        PyObject *cb = PyBytes_FromStringAndSize(codes.p ? codes.p : "", codes.n);
        if (cb) result = Py_BuildValue("NOO", cb, lines, used);
    }
done:
    Py_XDECREF(lines);
    Py_XDECREF(used);
    PyMem_Free(codes.p);
    PyMem_Free(seen);
    PyBuffer_Release(&rb);
    PyBuffer_Release(&ib);
    return result;
}

static PyMethodDef methods[] = {
    {"resample_kernels", resample_kernels, METH_NOARGS,
     "resample_kernels() -> tuple[str, ...]: the kernels resample_means(d, key, key_retry, first, out, kernel) runs on "
     "this CPU, fastest first (every one gives the same bits)."},
    {"overlap_counts", overlap_counts, METH_VARARGS,
     "overlap_counts(prediction, reference) -> (n_prediction, n_reference, n_overlap) under the openscribe rule."},
    {"shared_marks", shared_marks, METH_VARARGS,
     "shared_marks(prediction, reference) -> (marks, marks) | None: shared-token marks of two ASCII texts (openscribe)."},
    {"sorted_contained", sorted_contained, METH_VARARGS,
     "sorted_contained(ps, lo, hi, weight, rel_tol) -> int: needles [lo, hi] met by the sorted float64 ps (pairing)."},
    {"all_close", all_close, METH_VARARGS, "all_close(g, p, half, rel) -> bool: every cell within the tolerance rule."},
    {"row_hashes", row_hashes, METH_VARARGS, "row_hashes(keys, out) -> None: the 64-bit mix of each int64 row (matching)."},
    {"rows_equal", rows_equal, METH_VARARGS, "rows_equal(keys, rep) -> bool: every row equal to its representative row."},
    {"pair_rows", pair_rows, METH_VARARGS,
     "pair_rows(gkeys, pkeys, gnum, pnum, a, b) -> int: equal rows paired as stacks (matching.stack_pairs) into a, b."},
    {"row_ids", row_ids, METH_VARARGS,
     "row_ids(gkeys, pkeys, out) -> int: group ids of both tables' rows, golden first, in first-row order."},
    {"float_decimals", float_decimals, METH_VARARGS,
     "float_decimals(x, out) -> None: the decimals each float64 is written with (values.float_decimals) into out."},
    {"number_facts", number_facts, METH_VARARGS,
     "number_facts(v) -> (nulls, finite whole, int64 sum | None): the facts rows._number_facts reads of a column."},
    {"agreement_counts", agreement_counts, METH_VARARGS,
     "agreement_counts(g, p, ga, pb, out) -> None: out[i, j] = rows t with g[ga[t], i] == p[pb[t], j]."},
    {"columns_of", columns_of, METH_VARARGS,
     "columns_of(rows, width) -> list[list] | None: the columns of a list of equal-length list/tuple rows."},
    {"fill_numbers", fill_numbers, METH_VARARGS,
     "fill_numbers(cells, out) -> int: float64 cells of an int/float/None column into out; -1 at another cell."},
    {"common_min_count", common_min_count, METH_VARARGS,
     "common_min_count(a, b) -> int: size of the multiset intersection of two sorted float64 arrays (pairing)."},
    {"label_lines", label_lines, METH_VARARGS,
     "label_lines(block, pos, lineno, loads, refused, id_key, gold_key, pred_key, counts, repeated, positive, dumps, emit, table[, tails])"
     " -> (pos, lineno, n_rows, n_null, body): the plain rows of a JSONL label file (goldeval.labelfile)."},
    {"label_table", label_table, METH_NOARGS, "label_table() -> capsule: label_lines' state for one run."},
    {"tail_table", tail_table, METH_NOARGS, "tail_table() -> capsule: code_records' tails for one recorder."},
    {"code_records", code_records, METH_VARARGS,
     "code_records(records, ids, n, table, known, cap) -> (codes, lines, used) | None: a block's records as tail codes."},
    {"label_flush", label_flush, METH_VARARGS, "label_flush(table, counts) -> None: add label_lines' pending counts."},
    {"scan_ids", scan_ids, METH_VARARGS,
     "scan_ids(block, quoted) -> (n_lines, hashes, slow): the prefix rule's id hashes of a block of JSONL (goldeval.ids)."},
    {"partition_hashes", partition_hashes, METH_VARARGS,
     "partition_hashes(hashes, n) -> (bytes, counts): int64 hashes ordered by bucket h % n (goldeval.ids.HashBuckets)."},
    {"resample_means", resample_means, METH_VARARGS,
     "resample_means(d, key, key_retry, first, out) -> None: bootstrap resample means (goldeval.resample)."},
    {"f1_lines", f1_lines, METH_VARARGS,
     "f1_lines(block, pos, lineno, id_key, pred_key, ref_key, emit) -> (pos, lineno, n, body, records, ids, sums): the plain rows of "
     "a token F1 JSONL chunk (goldeval.freetext.scorer.TokenF1.line_kernel)."},
    {"repeated_of", repeated_of, METH_VARARGS, "repeated_of(hashes) -> list[int]: the int64 values that occur more than once."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "goldeval._fast",
                                    "C fast paths: the openscribe token rule (goldeval.tokens) and the pairing's containment shares (goldeval.answers.pairing).", -1, methods};

#ifndef GOLDEVAL_FAST_SOURCE_SHA256
#define GOLDEVAL_FAST_SOURCE_SHA256 "unknown"
#endif

/* SOURCE_SHA256: the digest of this file that setup.py compiled in; goldeval._native compares it with the file. */
PyMODINIT_FUNC PyInit__fast(void) {
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddStringConstant(m, "SOURCE_SHA256", GOLDEVAL_FAST_SOURCE_SHA256) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
