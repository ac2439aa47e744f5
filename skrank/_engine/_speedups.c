/*
 * skrank._engine._speedups: optional compiled passes over arrays of Python objects.
 *
 * Query ids often arrive as numpy object arrays (what pandas hands over), one
 * Python str or int per row.  Every pure-numpy route through them pays a Python
 * call per row (an elementwise comparison, tolist, a join, a conversion): 10-20 ms
 * per million rows, more than the whole evaluation of integer ids.  These two
 * functions read the objects once in C.  (Two more, at the end, are tight loops over
 * the ranked rows of tie-averaged average precision.)  skrank works without them: the pure
 * numpy path in skrank/_grouping.py gives the same values and is tested in CI
 * with this module disabled.
 *
 * The arrays are read through their __array_interface__ (1-D, C-contiguous,
 * object dtype, else TypeError): numpy's headers are not needed, so the module
 * builds against any numpy.  Nothing here calls back into
 * Python code (no __eq__, no __hash__ of a user type): only exact str and int
 * objects are read; anything else makes the function give up and the caller
 * takes the pure path.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* The items of a 1-D C-contiguous numpy object array, read from its
 * __array_interface__ (the array itself stays referenced by the call's
 * arguments, so its items live as long as the call); NULL with an error for
 * anything else. */
/* numpy.ndarray, looked up when the module is imported: only an array of exactly
 * that type has an __array_interface__ that can be trusted (any other object, a
 * subclass included, could claim a bogus data pointer). */
static PyObject *ndarray_type = NULL;

static PyObject **
object_items(PyObject *array, Py_ssize_t *n)
{
    if (ndarray_type == NULL || (PyObject *)Py_TYPE(array) != ndarray_type) {
        PyErr_SetString(PyExc_TypeError, "expected a numpy.ndarray (exactly) of dtype object");
        return NULL;
    }
    PyObject *interface = PyObject_GetAttrString(array, "__array_interface__");
    if (interface == NULL) {
        return NULL;
    }
    PyObject **items = NULL;
    PyObject *typestr = PyDict_Check(interface) ? PyDict_GetItemString(interface, "typestr") : NULL;
    PyObject *shape = PyDict_Check(interface) ? PyDict_GetItemString(interface, "shape") : NULL;
    PyObject *strides = PyDict_Check(interface) ? PyDict_GetItemString(interface, "strides") : NULL;
    PyObject *data = PyDict_Check(interface) ? PyDict_GetItemString(interface, "data") : NULL;
    if (typestr == NULL || !PyUnicode_Check(typestr)
            || PyUnicode_CompareWithASCIIString(typestr, "|O") != 0
            || shape == NULL || !PyTuple_Check(shape) || PyTuple_GET_SIZE(shape) != 1
            || (strides != NULL && strides != Py_None)
            || data == NULL || !PyTuple_Check(data) || PyTuple_GET_SIZE(data) < 1) {
        PyErr_SetString(PyExc_TypeError, "expected a 1-D C-contiguous numpy object array");
        goto done;
    }
    *n = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, 0));
    if (*n < 0) {
        goto done;
    }
    items = (PyObject **)PyLong_AsVoidPtr(PyTuple_GET_ITEM(data, 0));
    if (items == NULL && !PyErr_Occurred()) {
        if (*n == 0) {
            items = (PyObject **)&PyTuple_GET_ITEM(data, 0); /* never read */
        }
        else {
            PyErr_SetString(PyExc_ValueError, "null data pointer for a non-empty array");
        }
    }
done:
    Py_DECREF(interface);
    return items;
}

static int
writable_buffer(PyObject *obj, Py_buffer *view, Py_ssize_t itemsize, Py_ssize_t n, const char *name)
{
    if (PyObject_GetBuffer(obj, view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) {
        return -1;
    }
    if (view->len < itemsize * n) {
        PyErr_Format(PyExc_ValueError, "%s holds %zd bytes, %zd needed", name, view->len,
                     itemsize * n);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* The ids and the first output buffer (n items of itemsize bytes), as every
 * function here takes them; NULL with an error otherwise (the buffer is then
 * not held). */
static PyObject **
ids_and_output(PyObject *array, PyObject *out, Py_ssize_t itemsize, const char *name,
               Py_ssize_t *n, Py_buffer *view)
{
    PyObject **items = object_items(array, n);
    if (items == NULL || writable_buffer(out, view, itemsize, *n, name) < 0) {
        return NULL;
    }
    return items;
}

/* ---------------------------------------------------------------------------
 * int_values(ids, out) -> bool
 *
 * out[i] = ids[i] for every row when every id is an exact int within int64
 * (True); False as soon as one is not (bool, float, numpy scalar, str, None, a
 * big int): the caller's pure path decides what such ids mean.
 */
static PyObject *
int_values(PyObject *self, PyObject *args)
{
    PyObject *array, *out;
    Py_ssize_t n = 0;
    Py_buffer view;
    if (!PyArg_ParseTuple(args, "OO", &array, &out)) {
        return NULL;
    }
    PyObject **items = ids_and_output(array, out, sizeof(int64_t), "out", &n, &view);
    if (items == NULL) {
        return NULL;
    }
    int64_t *values = (int64_t *)view.buf;
    int ok = 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = items[i];
        int overflow = 0;
        if (!PyLong_CheckExact(item)) {
            ok = 0;
            break;
        }
        long long value = PyLong_AsLongLongAndOverflow(item, &overflow);
        if (overflow) {
            ok = 0;
            break;
        }
        values[i] = (int64_t)value;
    }
    PyBuffer_Release(&view);
    return PyBool_FromLong(ok);
}

/* ---------------------------------------------------------------------------
 * str_codes(ids, codes, firsts) -> int
 *
 * The distinct strings of ids numbered in order of first appearance:
 * codes[i] is the number of ids[i], firsts[j] the first row holding string j.
 * Returns how many distinct strings there are, or -1 when one id is not an
 * exact str (the caller's pure path handles such ids).
 *
 * Two str objects are equal exactly when their kinds (bytes per character),
 * lengths and characters are: CPython stores each string in the narrowest kind
 * that holds its largest character.  A row equal to the row before (the same
 * object, or the same characters) takes its number without hashing, so ids
 * grouped by query cost a comparison per row; others are looked up in an
 * open-addressing table, grown past 0.7 load.
 */

typedef struct {
    const void *data;
    Py_ssize_t length;
    int kind;
} str_view;

static int
view_of(PyObject *item, str_view *out)
{
    if (!PyUnicode_CheckExact(item)) {
        return -1;
    }
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(item) < 0) {
        PyErr_Clear();
        return -1;
    }
#endif
    out->data = PyUnicode_DATA(item);
    out->length = PyUnicode_GET_LENGTH(item);
    out->kind = (int)PyUnicode_KIND(item);
    return 0;
}

static inline int
same_string(const str_view *a, const str_view *b)
{
    return a->kind == b->kind && a->length == b->length
           && memcmp(a->data, b->data, (size_t)a->length * (size_t)a->kind) == 0;
}

#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(address) __builtin_prefetch((const void *)(address))
#else
#define PREFETCH(address) ((void)0)
#endif
#define PREFETCH_DISTANCE 16
/* A str object's header and the start of its characters, which may lie on the next
 * cache line: both fetched at once rather than the second only once the first has
 * said where the characters are (about 7% faster on objects scattered in memory). */
#define PREFETCH_OBJECT(object) \
    (PREFETCH(object), PREFETCH((const char *)(object) + sizeof(PyASCIIObject)))
#define TOP_BITS 0x8080808080808080ULL

/* A multiply-xorshift hash of the characters' bytes, eight at a time (the
 * length and kind seed it, so zero bytes at the end still count); *head gets
 * the first eight bytes (zero-padded), which decide equality for short ids. */
static inline uint64_t
mix(uint64_t h, uint64_t word)
{
    h ^= word;
    h *= 0x9E3779B97F4A7C15ULL;
    return h ^ (h >> 32);
}

static inline uint64_t
tail_word(const unsigned char *p, size_t size)
{
    /* the last 1-7 bytes, without a call to memcpy of a variable size */
    uint64_t word = 0;
    switch (size) {
    case 7: word |= (uint64_t)p[6] << 48; /* fall through */
    case 6: word |= (uint64_t)p[5] << 40; /* fall through */
    case 5: word |= (uint64_t)p[4] << 32; /* fall through */
    case 4: word |= (uint64_t)p[3] << 24; /* fall through */
    case 3: word |= (uint64_t)p[2] << 16; /* fall through */
    case 2: word |= (uint64_t)p[1] << 8; /* fall through */
    case 1: word |= (uint64_t)p[0];
    }
    return word;
}

static inline uint64_t
hash_string(const str_view *s, uint64_t *head)
{
    const unsigned char *p = (const unsigned char *)s->data;
    size_t size = (size_t)s->length * (size_t)s->kind;
    uint64_t h = ((uint64_t)size << 2 | (uint64_t)s->kind) * 0xC2B2AE3D27D4EB4FULL;
    uint64_t word;
    *head = size >= 8 ? (memcpy(&word, p, 8), word) : tail_word(p, size);
    for (; size >= 8; size -= 8, p += 8) {
        memcpy(&word, p, 8);
        h = mix(h, word);
    }
    if (size) {
        h = mix(h, tail_word(p, size));
    }
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ULL;
    return h ^ (h >> 31);
}

/* A slot of the table: 24 bytes, so the table of 10,000 ids stays in the L2
 * cache.  Strings of at most 8 bytes are told apart by their shape and head
 * alone; longer ones are compared with the first row holding the string. */
#define EMPTY UINT32_MAX
#define LONG_SHAPE UINT32_MAX

typedef struct {
    uint64_t hash;
    uint64_t head;
    uint32_t code; /* EMPTY: no string here */
    uint32_t shape; /* bytes << 2 | kind, or LONG_SHAPE beyond 2**29 bytes */
} slot;

static inline uint32_t
shape_of(const str_view *s)
{
    size_t size = (size_t)s->length * (size_t)s->kind;
    return size < ((size_t)1 << 29) ? (uint32_t)(size << 2 | (size_t)s->kind) : LONG_SHAPE;
}

static slot *
new_table(size_t size)
{
    slot *table = (slot *)PyMem_Malloc(size * sizeof(slot));
    if (table == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < size; i++) {
        table[i].code = EMPTY;
    }
    return table;
}

/* The table twice as large, every slot placed again. */
static slot *
grow(slot *table, size_t size)
{
    size_t new_size = size * 2, new_mask = new_size - 1;
    slot *grown = new_table(new_size);
    if (grown != NULL) {
        for (size_t j = 0; j < size; j++) {
            if (table[j].code != EMPTY) {
                size_t to = (size_t)table[j].hash & new_mask;
                while (grown[to].code != EMPTY) {
                    to = (to + 1) & new_mask;
                }
                grown[to] = table[j];
            }
        }
    }
    PyMem_Free(table);
    return grown;
}

static PyObject *
str_codes(PyObject *self, PyObject *args)
{
    PyObject *array, *codes_obj, *firsts_obj;
    Py_ssize_t n = 0;
    Py_buffer codes_view, firsts_view;
    if (!PyArg_ParseTuple(args, "OOO", &array, &codes_obj, &firsts_obj)) {
        return NULL;
    }
    PyObject **items = ids_and_output(array, codes_obj, sizeof(Py_ssize_t), "codes", &n,
                                      &codes_view);
    if (items == NULL) {
        return NULL;
    }
    if (writable_buffer(firsts_obj, &firsts_view, sizeof(Py_ssize_t), n, "firsts") < 0) {
        PyBuffer_Release(&codes_view);
        return NULL;
    }
    Py_ssize_t *codes = (Py_ssize_t *)codes_view.buf;
    Py_ssize_t *firsts = (Py_ssize_t *)firsts_view.buf;
    Py_ssize_t n_distinct = 0;
    size_t size = 1024, mask = size - 1;
    slot *table = new_table(size);
    str_view previous = {NULL, -1, 0}, current, other;
    PyObject *previous_item = NULL;
    Py_ssize_t previous_code = -1;
    int in_run = 0;
    for (Py_ssize_t i = 0; table != NULL && i < n; i++) {
        PyObject *item = items[i];
        if (i + PREFETCH_DISTANCE < n) {
            /* Rows in random order point all over the heap: a string a few rows
             * ahead is fetched early. */
            PREFETCH_OBJECT(items[i + PREFETCH_DISTANCE]);
        }
        if (item == previous_item) {
            codes[i] = previous_code;
            continue;
        }
        if (view_of(item, &current) < 0) {
            n_distinct = -1;
            break;
        }
        previous_item = item;
        if (in_run && same_string(&current, &previous)) {
            codes[i] = previous_code; /* rows grouped by query: no hashing */
            continue;
        }
        uint64_t head, h = hash_string(&current, &head);
        uint32_t shape = shape_of(&current);
        size_t at = (size_t)h & mask;
        Py_ssize_t code = -1;
        for (; table[at].code != EMPTY; at = (at + 1) & mask) {
            if (table[at].hash != h || table[at].shape != shape || table[at].head != head) {
                continue;
            }
            if (shape != LONG_SHAPE && (shape >> 2) <= 8) {
                code = table[at].code;
                break;
            }
            view_of(items[firsts[table[at].code]], &other);
            if (same_string(&current, &other)) {
                code = table[at].code;
                break;
            }
        }
        if (code < 0) { /* a new string: numbered, and the table grown past 0.7 load */
            if ((uint64_t)n_distinct >= (uint64_t)EMPTY) {
                n_distinct = -1; /* 2**32 distinct ids: left to the pure path */
                break;
            }
            code = n_distinct++;
            firsts[code] = i;
            table[at].hash = h;
            table[at].head = head;
            table[at].code = (uint32_t)code;
            table[at].shape = shape;
            if ((size_t)n_distinct * 3 > size) {
                table = grow(table, size);
                size *= 2;
                mask = size - 1;
            }
        }
        codes[i] = code;
        /* Rows are compared with the row before only while the last two were
         * equal: rows grouped by query skip the table, rows in random order
         * skip the comparison. */
        in_run = code == previous_code;
        previous = current;
        previous_code = code;
    }
    PyBuffer_Release(&codes_view);
    PyBuffer_Release(&firsts_view);
    if (table == NULL) {
        return PyErr_NoMemory();
    }
    PyMem_Free(table);
    return PyLong_FromSsize_t(n_distinct);
}

/* Python's order of two strings: code point after code point, then the shorter
 * first (-1, 0 or 1).  One-byte strings compare as unsigned bytes (Latin-1 code
 * points); other kinds, or two different kinds, code point by code point. */
static int
compare_strings(const str_view *a, const str_view *b)
{
    Py_ssize_t n = a->length < b->length ? a->length : b->length;
    if (a->kind == PyUnicode_1BYTE_KIND && b->kind == PyUnicode_1BYTE_KIND) {
        int c = memcmp(a->data, b->data, (size_t)n);
        if (c != 0) {
            return c < 0 ? -1 : 1;
        }
    }
    else {
        for (Py_ssize_t i = 0; i < n; i++) {
            Py_UCS4 x = PyUnicode_READ(a->kind, a->data, i);
            Py_UCS4 y = PyUnicode_READ(b->kind, b->data, i);
            if (x != y) {
                return x < y ? -1 : 1;
            }
        }
    }
    return (a->length > b->length) - (a->length < b->length);
}

/* ---------------------------------------------------------------------------
 * str_runs(ids, starts) -> int
 *
 * The runs of equal strings, when the runs' strings increase (rows grouped by
 * query, in the ids' order: one run per query): starts[r] is the first row of
 * run r (starts[0] = 0); returns the number of runs, -1 when one id is not an
 * exact str, or -2 as soon as a run's string is not greater than the run's
 * before (the rows are not grouped in order: the caller numbers them).  Each
 * string is compared with the row before while both are in cache.
 */
static PyObject *
str_runs(PyObject *self, PyObject *args)
{
    PyObject *array, *starts_obj;
    Py_ssize_t n = 0;
    Py_buffer view;
    if (!PyArg_ParseTuple(args, "OO", &array, &starts_obj)) {
        return NULL;
    }
    PyObject **items = ids_and_output(array, starts_obj, sizeof(Py_ssize_t), "starts", &n, &view);
    if (items == NULL) {
        return NULL;
    }
    Py_ssize_t *starts = (Py_ssize_t *)view.buf;
    Py_ssize_t n_runs = 0;
    PyObject *previous_item = NULL;
    str_view previous = {NULL, -1, 0}, current;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = items[i];
        if (i + PREFETCH_DISTANCE < n) {
            PREFETCH_OBJECT(items[i + PREFETCH_DISTANCE]);
        }
        if (item == previous_item) {
            continue;
        }
        if (view_of(item, &current) < 0) {
            n_runs = -1;
            break;
        }
        if (previous_item == NULL || !same_string(&current, &previous)) {
            if (previous_item != NULL && compare_strings(&current, &previous) < 0) {
                n_runs = -2;
                break;
            }
            starts[n_runs++] = i;
        }
        previous_item = item;
        previous = current;
    }
    PyBuffer_Release(&view);
    return PyLong_FromSsize_t(n_runs);
}

/* ---------------------------------------------------------------------------
 * ascii_heads(ids, heads, low, high) -> bool
 *
 * Short ids ("q00042", "user17", "1234567") are their own keys: heads[i] gets
 * the characters of ids[i], zero-padded to eight bytes, and low[j] / high[j]
 * the smallest and largest byte at position j, when every id is an exact ASCII
 * str of at most 8 characters without "\0" (True); False as soon as one is not.  With no "\0" inside, the zero padding orders a prefix before
 * its extensions, so the heads' bytes compare as Python compares the strings;
 * skrank/_grouping.py turns them into small integer keys (radix_keys) in that
 * order, and no hashing or sorting of the ids is needed.
 */
static PyObject *
ascii_heads(PyObject *self, PyObject *args)
{
    PyObject *array, *out, *low_obj, *high_obj;
    Py_ssize_t n = 0;
    Py_buffer view, low_view, high_view;
    if (!PyArg_ParseTuple(args, "OOOO", &array, &out, &low_obj, &high_obj)) {
        return NULL;
    }
    PyObject **items = ids_and_output(array, out, sizeof(uint64_t), "heads", &n, &view);
    if (items == NULL) {
        return NULL;
    }
    if (writable_buffer(low_obj, &low_view, 1, 8, "low") < 0) {
        PyBuffer_Release(&view);
        return NULL;
    }
    if (writable_buffer(high_obj, &high_view, 1, 8, "high") < 0) {
        PyBuffer_Release(&view);
        PyBuffer_Release(&low_view);
        return NULL;
    }
    uint64_t *heads = (uint64_t *)view.buf;
    /* Each character position's smallest and largest byte, kept as two words of
     * eight lanes: the loop waits on memory, these few operations are free. */
    uint64_t low = 0x7F7F7F7F7F7F7F7FULL, high = 0;
    int ok = 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = items[i];
        str_view s;
        if (i + PREFETCH_DISTANCE < n) {
            PREFETCH_OBJECT(items[i + PREFETCH_DISTANCE]);
        }
        if (view_of(item, &s) < 0 || !PyUnicode_IS_ASCII(item) || s.length > 8) {
            ok = 0;
            break;
        }
        uint64_t head;
        if (s.length == 8) {
            memcpy(&head, s.data, 8);
        }
        else {
            head = tail_word((const unsigned char *)s.data, (size_t)s.length);
        }
        /* "\0" inside: a zero byte among the first `length` (the padding set non-zero) */
        uint64_t v = s.length == 8 ? head : head | (~(uint64_t)0 << (8 * s.length));
        if ((v - 0x0101010101010101ULL) & ~v & 0x8080808080808080ULL) {
            ok = 0;
            break;
        }
        heads[i] = head;
        /* Lane-wise minimum and maximum without a branch: every byte is ASCII
         * (below 0x80), so (x | 0x80) - y leaves each lane's top bit set exactly
         * where x >= y, and no lane borrows from the next. */
        uint64_t above = ~((high | TOP_BITS) - head) & TOP_BITS; /* head > high */
        uint64_t below = ~((head | TOP_BITS) - low) & TOP_BITS;  /* head < low */
        above = (above >> 7) * 0xFF;
        below = (below >> 7) * 0xFF;
        high = (head & above) | (high & ~above);
        low = (head & below) | (low & ~below);
    }
    for (int j = 0; j < 8; j++) {
        ((unsigned char *)low_view.buf)[j] = (unsigned char)((low >> (8 * j)) & 0xFF);
        ((unsigned char *)high_view.buf)[j] = (unsigned char)((high >> (8 * j)) & 0xFF);
    }
    PyBuffer_Release(&view);
    PyBuffer_Release(&low_view);
    PyBuffer_Release(&high_view);
    return PyBool_FromLong(ok);
}

/* ---------------------------------------------------------------------------
 * radix_keys(heads, low, strides, rows, counts) -> None
 *
 * In place: heads[i] (eight bytes, the first the most significant) becomes
 * sum_j (byte_j - low[j]) * strides[j], a key in [0, width) ordered as the
 * heads; rows[key] = a row holding that key and counts[key] += 1 (the caller
 * sized both to the width and zeroed counts; rows is read where counts > 0).
 */
static PyObject *
radix_keys(PyObject *self, PyObject *args)
{
    PyObject *heads_obj, *low_obj, *strides_obj, *rows_obj, *counts_obj;
    Py_buffer heads_view, low_view, strides_view, rows_view, counts_view;
    if (!PyArg_ParseTuple(args, "OOOOO", &heads_obj, &low_obj, &strides_obj, &rows_obj,
                          &counts_obj)) {
        return NULL;
    }
    if (writable_buffer(heads_obj, &heads_view, 1, 0, "heads") < 0) {
        return NULL;
    }
    if (PyObject_GetBuffer(low_obj, &low_view, PyBUF_C_CONTIGUOUS) < 0) {
        PyBuffer_Release(&heads_view);
        return NULL;
    }
    if (PyObject_GetBuffer(strides_obj, &strides_view, PyBUF_C_CONTIGUOUS) < 0) {
        PyBuffer_Release(&heads_view);
        PyBuffer_Release(&low_view);
        return NULL;
    }
    if (writable_buffer(rows_obj, &rows_view, 1, 0, "rows") < 0) {
        PyBuffer_Release(&heads_view);
        PyBuffer_Release(&low_view);
        PyBuffer_Release(&strides_view);
        return NULL;
    }
    if (writable_buffer(counts_obj, &counts_view, 1, 0, "counts") < 0) {
        PyBuffer_Release(&heads_view);
        PyBuffer_Release(&low_view);
        PyBuffer_Release(&strides_view);
        PyBuffer_Release(&rows_view);
        return NULL;
    }
    PyObject *result = NULL;
    if (low_view.len != 8 || strides_view.len != 8 * (Py_ssize_t)sizeof(int64_t)
            || heads_view.len % 8 != 0 || rows_view.len % (Py_ssize_t)sizeof(Py_ssize_t) != 0
            || counts_view.len != rows_view.len) {
        PyErr_SetString(PyExc_ValueError, "radix_keys: 8 low bytes, 8 int64 strides, "
                        "uint64 heads, and intp rows and counts of one width expected");
        goto done;
    }
    const unsigned char *low = (const unsigned char *)low_view.buf;
    const int64_t *strides = (const int64_t *)strides_view.buf;
    uint64_t *heads = (uint64_t *)heads_view.buf;
    Py_ssize_t *rows = (Py_ssize_t *)rows_view.buf;
    Py_ssize_t *counts = (Py_ssize_t *)counts_view.buf;
    Py_ssize_t n = heads_view.len / 8, width = rows_view.len / (Py_ssize_t)sizeof(Py_ssize_t);
    /* Each varying position's share of the key per byte value, looked up from
     * tables that stay in the L1 cache (constant positions add nothing). */
    int64_t (*shares)[256] = PyMem_Calloc(8, sizeof(*shares));
    int shifts[8] = {0}, n_positions = 0;
    if (shares == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (int j = 0; j < 8; j++) {
        if (strides[j] != 0) {
            for (int b = 0; b < 256; b++) {
                shares[n_positions][b] = ((int64_t)b - (int64_t)low[j]) * strides[j];
            }
            shifts[n_positions++] = 8 * j;
        }
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        uint64_t head = heads[i];
        int64_t key = 0;
        switch (n_positions) { /* unrolled: the same count for every row */
        case 8: key += shares[7][(head >> shifts[7]) & 0xFF]; /* fall through */
        case 7: key += shares[6][(head >> shifts[6]) & 0xFF]; /* fall through */
        case 6: key += shares[5][(head >> shifts[5]) & 0xFF]; /* fall through */
        case 5: key += shares[4][(head >> shifts[4]) & 0xFF]; /* fall through */
        case 4: key += shares[3][(head >> shifts[3]) & 0xFF]; /* fall through */
        case 3: key += shares[2][(head >> shifts[2]) & 0xFF]; /* fall through */
        case 2: key += shares[1][(head >> shifts[1]) & 0xFF]; /* fall through */
        case 1: key += shares[0][(head >> shifts[0]) & 0xFF]; /* fall through */
        default: break;
        }
        if (key < 0 || key >= width) {
            PyErr_SetString(PyExc_ValueError, "radix_keys: a key outside [0, width)");
            PyMem_Free(shares);
            goto done;
        }
        heads[i] = (uint64_t)key;
        rows[key] = i;
        counts[key]++;
    }
    PyMem_Free(shares);
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&heads_view);
    PyBuffer_Release(&low_view);
    PyBuffer_Release(&strides_view);
    PyBuffer_Release(&rows_view);
    PyBuffer_Release(&counts_view);
    return result;
}

/* ---------------------------------------------------------------------------
 * Tie-averaged average precision (skrank/_engine/kernels.py): two passes over the
 * ranked rows, each a tight loop where numpy needs a dozen calls.  Only counting and
 * the sums of the terms are done here; the groups' closed form is numpy's, so both
 * routes give the same values to the last bit (checked in tests/test_tie_patterns.py).
 *
 * The rows of query q are offsets[q] .. offsets[q + 1] - 1 in rank order; relevant[i]
 * (one byte, 0 or 1) says whether row i is relevant; same[i] (n - 1 bytes) whether rows
 * i and i + 1 tie (a tie group is a maximal run of them within one query).
 */

/* A read-only C-contiguous buffer of n items of itemsize bytes; -1 with an error. */
static int
readable_buffer(PyObject *obj, Py_buffer *view, Py_ssize_t itemsize, Py_ssize_t n,
                const char *name)
{
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS) < 0) {
        return -1;
    }
    if (view->len != itemsize * n) {
        PyErr_Format(PyExc_ValueError, "%s holds %zd bytes, %zd expected", name, view->len,
                     itemsize * n);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* The rows, flags and offsets both passes read; -1 with an error (nothing held). */
static int
tie_inputs(PyObject *relevant_obj, PyObject *same_obj, PyObject *offsets_obj, Py_buffer *rel,
           Py_buffer *same, Py_buffer *offsets, Py_ssize_t *n, Py_ssize_t *nq)
{
    if (PyObject_GetBuffer(relevant_obj, rel, PyBUF_C_CONTIGUOUS) < 0) {
        return -1;
    }
    *n = rel->len;
    if (readable_buffer(same_obj, same, 1, *n > 0 ? *n - 1 : 0, "same") < 0) {
        PyBuffer_Release(rel);
        return -1;
    }
    if (PyObject_GetBuffer(offsets_obj, offsets, PyBUF_C_CONTIGUOUS) < 0) {
        PyBuffer_Release(rel);
        PyBuffer_Release(same);
        return -1;
    }
    *nq = offsets->len / (Py_ssize_t)sizeof(Py_ssize_t) - 1;
    const Py_ssize_t *off = (const Py_ssize_t *)offsets->buf;
    int ok = offsets->len % (Py_ssize_t)sizeof(Py_ssize_t) == 0 && *nq >= 0;
    for (Py_ssize_t q = 0; ok && q < *nq; q++) {
        ok = off[q] >= 0 && off[q] <= off[q + 1] && off[q + 1] <= *n;
    }
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "offsets: intp, non-decreasing, within the rows");
        PyBuffer_Release(rel);
        PyBuffer_Release(same);
        PyBuffer_Release(offsets);
        return -1;
    }
    return 0;
}

/* tie_groups(relevant, same, offsets, starts, sizes, positions, above, n_rel, first) -> int
 *
 * Every tie group of two or more rows, in rank order: its first row, size, position in
 * the query, the relevant rows of the query above it and the relevant rows in it (intp
 * outputs, as many items each, at least one more than the groups).  Returns how many;
 * -1 when the outputs are too short.  first (intp, one per query): the query's first
 * relevant row, -1 where it has none.  Without a branch on the data (rounded scores make
 * the flags random, and mispredicted branches would cost more than the work): each row
 * writes the current group's slot, which advances where a group ends. */
static PyObject *
tie_groups(PyObject *self, PyObject *args)
{
    PyObject *rel_obj, *same_obj, *off_obj, *out_obj[6];
    Py_buffer rel, same, offsets, out[6];
    Py_ssize_t n, nq;
    if (!PyArg_ParseTuple(args, "OOOOOOOOO", &rel_obj, &same_obj, &off_obj, &out_obj[0],
                          &out_obj[1], &out_obj[2], &out_obj[3], &out_obj[4], &out_obj[5])) {
        return NULL;
    }
    if (tie_inputs(rel_obj, same_obj, off_obj, &rel, &same, &offsets, &n, &nq) < 0) {
        return NULL;
    }
    int held = 0;
    Py_ssize_t capacity = 0;
    PyObject *result = NULL;
    for (; held < 5; held++) {
        if (writable_buffer(out_obj[held], &out[held], 1, 0, "tie_groups output") < 0) {
            goto done;
        }
        Py_ssize_t items = out[held].len / (Py_ssize_t)sizeof(Py_ssize_t);
        capacity = held == 0 || items < capacity ? items : capacity;
    }
    if (writable_buffer(out_obj[5], &out[5], (Py_ssize_t)sizeof(Py_ssize_t), nq, "first") < 0) {
        goto done;
    }
    held++;
    {
        const unsigned char *r = (const unsigned char *)rel.buf;
        const unsigned char *t = (const unsigned char *)same.buf;
        const Py_ssize_t *off = (const Py_ssize_t *)offsets.buf;
        Py_ssize_t *o_start = (Py_ssize_t *)out[0].buf, *o_size = (Py_ssize_t *)out[1].buf;
        Py_ssize_t *o_pos = (Py_ssize_t *)out[2].buf, *o_above = (Py_ssize_t *)out[3].buf;
        Py_ssize_t *o_rel = (Py_ssize_t *)out[4].buf, *o_first = (Py_ssize_t *)out[5].buf;
        Py_ssize_t g = 0, limit = capacity - 1;
        Py_BEGIN_ALLOW_THREADS   /* plain loops over held buffers: other threads may run */
        for (Py_ssize_t q = 0; q < nq && g < capacity; q++) {
            Py_ssize_t a = off[q], b = off[q + 1], hits = 0, first = a, above = 0, found = -1;
            unsigned prev = 0;
            for (Py_ssize_t i = a; i < b; i++) {
                unsigned tie = i + 1 < b ? (t[i] != 0) : 0;
                unsigned opens = tie & (prev ^ 1), closes = prev & (tie ^ 1);
                first = opens ? i : first;
                above = opens ? hits : above;
                found = (found < 0 && r[i]) ? i : found;
                hits += r[i] != 0;
                if (g > limit) {   /* more groups than the outputs hold */
                    break;
                }
                o_start[g] = first;
                o_size[g] = i + 1 - first;
                o_pos[g] = first - a;
                o_above[g] = above;
                o_rel[g] = hits - above;
                g += closes;
                prev = tie;
            }
            o_first[q] = found;
        }
        Py_END_ALLOW_THREADS
        result = PyLong_FromSsize_t(g > limit ? -1 : g);
    }
done:
    for (int j = 0; j < held; j++) {
        PyBuffer_Release(&out[j]);
    }
    PyBuffer_Release(&rel);
    PyBuffer_Release(&same);
    PyBuffer_Release(&offsets);
    return result;
}

/* tie_ap_sums(relevant, same, offsets, k, group_terms, out) -> None
 *
 * out[q]: from 0.0, in rank order, hits / (position + 1.0) for each relevant row alone in
 * its tie group at a position below k (hits: the relevant rows of the query down to it),
 * and the next of group_terms (one per group of tie_groups, then one more, 0.0) at each
 * group's first row: the sums numpy's bincount gives over the same terms, to the last
 * bit (a term of 0.0, a row beyond k, in a group or not relevant, adds nothing to a sum
 * that starts at 0.0, and it is added as 0.0 * term: no branch on the data). */
static PyObject *
tie_ap_sums(PyObject *self, PyObject *args)
{
    PyObject *rel_obj, *same_obj, *off_obj, *terms_obj, *out_obj;
    Py_ssize_t k;
    Py_buffer rel, same, offsets, terms, out;
    Py_ssize_t n, nq;
    if (!PyArg_ParseTuple(args, "OOOnOO", &rel_obj, &same_obj, &off_obj, &k, &terms_obj,
                          &out_obj)) {
        return NULL;
    }
    if (tie_inputs(rel_obj, same_obj, off_obj, &rel, &same, &offsets, &n, &nq) < 0) {
        return NULL;
    }
    if (PyObject_GetBuffer(terms_obj, &terms, PyBUF_C_CONTIGUOUS) < 0) {
        PyBuffer_Release(&rel);
        PyBuffer_Release(&same);
        PyBuffer_Release(&offsets);
        return NULL;
    }
    PyObject *result = NULL;
    if (writable_buffer(out_obj, &out, (Py_ssize_t)sizeof(double), nq, "out") < 0) {
        goto release;
    }
    {
        const unsigned char *r = (const unsigned char *)rel.buf;
        const unsigned char *t = (const unsigned char *)same.buf;
        const Py_ssize_t *off = (const Py_ssize_t *)offsets.buf;
        const double *group_terms = (const double *)terms.buf;
        Py_ssize_t last = terms.len / (Py_ssize_t)sizeof(double) - 1, g = 0;
        double *sums = (double *)out.buf;
        int ok = last >= 0;
        Py_BEGIN_ALLOW_THREADS   /* plain loops over held buffers: other threads may run */
        for (Py_ssize_t q = 0; ok && q < nq; q++) {
            Py_ssize_t a = off[q], b = off[q + 1], hits = 0;
            unsigned prev = 0;
            double total = 0.0;
            for (Py_ssize_t i = a; i < b; i++) {
                unsigned tie = i + 1 < b ? (t[i] != 0) : 0;
                unsigned opens = tie & (prev ^ 1), relevant = r[i] != 0;
                hits += relevant;
                double alone = (double)(relevant & ((prev | tie) ^ 1) & (i - a < k));
                /* at most one of the two is not 0.0: one addition to the sum per row */
                total += alone * ((double)hits / ((double)(i - a) + 1.0))
                         + (double)opens * group_terms[g];
                g += opens;
                if (g > last) {   /* more groups than terms */
                    ok = 0;
                    break;
                }
                prev = tie;
            }
            sums[q] = total;
        }
        Py_END_ALLOW_THREADS
        if (!ok) {
            PyErr_SetString(PyExc_ValueError, "tie_ap_sums: fewer group terms than groups");
            goto done;
        }
        result = Py_None;
        Py_INCREF(result);
    }
done:
    PyBuffer_Release(&out);
release:
    PyBuffer_Release(&terms);
    PyBuffer_Release(&rel);
    PyBuffer_Release(&same);
    PyBuffer_Release(&offsets);
    return result;
}

static PyMethodDef methods[] = {
    {"int_values", int_values, METH_VARARGS,
     "int_values(ids, out) -> bool: exact int objects into an int64 buffer."},
    {"str_codes", str_codes, METH_VARARGS,
     "str_codes(ids, codes, firsts) -> int: exact str objects numbered in order of "
     "first appearance (-1 when one is not an exact str)."},
    {"str_runs", str_runs, METH_VARARGS,
     "str_runs(ids, starts) -> int: the first row of each run of equal exact str, the runs' "
     "strings increasing (-1 when one id is not an exact str, -2 when the runs do not "
     "increase)."},
    {"ascii_heads", ascii_heads, METH_VARARGS,
     "ascii_heads(ids, heads, low, high) -> bool: exact ASCII str of at most 8 characters (no NUL) as "
     "zero-padded 8-byte words."},
    {"radix_keys", radix_keys, METH_VARARGS,
     "radix_keys(heads, low, strides, rows, counts) -> None: heads in place into mixed-radix "
     "keys, rows[key] = a row with that key, counts[key] rows with it."},
    {"tie_groups", tie_groups, METH_VARARGS,
     "tie_groups(relevant, same, offsets, starts, sizes, positions, above, n_rel, first) -> "
     "int: every tie group of two or more rows (-1: outputs too short), each query's first "
     "relevant row."},
    {"tie_ap_sums", tie_ap_sums, METH_VARARGS,
     "tie_ap_sums(relevant, same, offsets, k, group_terms, out) -> None: tie-averaged "
     "average precision sums, in rank order."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_speedups",
    "Optional compiled passes over numpy object arrays of query ids (see skrank/_grouping.py) "
    "and over the ranked rows of tie-averaged average precision (skrank/_engine/kernels.py).",
    -1, methods,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    PyObject *numpy = PyImport_ImportModule("numpy");
    if (numpy == NULL) {
        return NULL;
    }
    Py_XDECREF(ndarray_type);
    ndarray_type = PyObject_GetAttrString(numpy, "ndarray");
    Py_DECREF(numpy);
    if (ndarray_type == NULL) {
        return NULL;
    }
    return PyModule_Create(&module);
}
