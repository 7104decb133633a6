/*
 * goldeval._fast: the openscribe token rule and the multiset overlap of two texts, in one pass each.
 *
 * overlap_counts(prediction: str, reference: str) -> (n_prediction, n_reference, n_overlap)
 *
 * Same definition as goldeval.tokens.OPENSCRIBE + goldeval.overlap.overlap_of_tokens (the pure-Python reference,
 * which stays the definition; tests check the two agree): text.lower(), then tokens are the leftmost-greedy matches
 * of [a-z0-9]+(?:[.'/-][a-z0-9]+)*, and the overlap is the size of the multiset intersection.
 * ASCII text is lowercased here; any other text is lowercased by str.lower() (so that e.g. KELVIN SIGN becomes 'k'
 * exactly as in Python) and its non-ASCII code points, which can never be part of a token, act as separators.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

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

static PyMethodDef methods[] = {
    {"overlap_counts", overlap_counts, METH_VARARGS,
     "overlap_counts(prediction, reference) -> (n_prediction, n_reference, n_overlap) under the openscribe rule."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "goldeval._fast",
                                    "C fast path for the openscribe token rule (see goldeval.tokens).", -1, methods};

PyMODINIT_FUNC PyInit__fast(void) { return PyModule_Create(&module); }
