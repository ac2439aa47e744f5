/*
 * skrank._speedups: optional compiled passes over arrays of Python objects.
 *
 * Query ids often arrive as numpy object arrays (what pandas hands over), one
 * Python str or int per row.  Every pure-numpy route through them pays a Python
 * call per row (an elementwise comparison, tolist, a join, a conversion): 10-20 ms
 * per million rows, more than the whole evaluation of integer ids.  These two
 * functions read the objects once in C.  skrank works without them: the pure
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
static PyObject **
object_items(PyObject *array, Py_ssize_t *n)
{
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
    PyObject **items = object_items(array, &n);
    if (items == NULL) {
        return NULL;
    }
    if (writable_buffer(out, &view, sizeof(int64_t), n, "out") < 0) {
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
    PyObject **items = object_items(array, &n);
    if (items == NULL) {
        return NULL;
    }
    if (writable_buffer(codes_obj, &codes_view, sizeof(Py_ssize_t), n, "codes") < 0) {
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
            PREFETCH(items[i + PREFETCH_DISTANCE]);
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

static PyMethodDef methods[] = {
    {"int_values", int_values, METH_VARARGS,
     "int_values(ids, out) -> bool: exact int objects into an int64 buffer."},
    {"str_codes", str_codes, METH_VARARGS,
     "str_codes(ids, codes, firsts) -> int: exact str objects numbered in order of "
     "first appearance (-1 when one is not an exact str)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_speedups",
    "Optional compiled passes over numpy object arrays of query ids (see skrank/_grouping.py).",
    -1, methods,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    return PyModule_Create(&module);
}
