/*
 * Optional accelerator for model/jsstr.py: the few JavaScript-string scans and the URI
 * payload codec that CPython cannot do at C speed in a handful of calls.
 *
 * Every function here has a pure-Python twin in jsstr.py with the same result on every
 * input (tests/test_accelerator.py compares them with Hypothesis); jsstr.py is the
 * readable definition and falls back to it when this module is not built.  Strings are
 * read as JavaScript sees them: UTF-16 code units, where a high surrogate followed by a
 * low one is one character even when CPython holds them as two code points.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* Strings made by the legacy (pre-PEP 393) APIs must be made ready before their data is
 * read; Python 3.12 removed such strings. */
#if PY_VERSION_HEX < 0x030C0000
#define ENSURE_READY(s) if (PyUnicode_READY(s) < 0) return NULL
#else
#define ENSURE_READY(s) (void)0
#endif

#if PY_VERSION_HEX < 0x030C0000
#define ENSURE_READY_INT(s) if (PyUnicode_READY(s) < 0) return -1
#else
#define ENSURE_READY_INT(s) (void)0
#endif

#define IS_SURROGATE(c) (((c) & 0xFFFFF800u) == 0xD800u)
#define IS_HIGH(c) (((c) & 0xFFFFFC00u) == 0xD800u)
#define IS_LOW(c) (((c) & 0xFFFFFC00u) == 0xDC00u)

/* ---- surrogate scan ---------------------------------------------------------------- */

/* Scans go a block at a time: a fixed-length loop without an early exit, which the
 * compiler turns into vector instructions; only a block with a hit is read unit by unit. */
#define BLOCK 64

/* Set state (see surrogate_state) for the n units at d; return 2 at the first pair. */
#define SURROGATE_SCAN(T, d)                                                               \
    do {                                                                                   \
        Py_ssize_t i = 0;                                                                  \
        while (i < n) {                                                                    \
            for (; i + BLOCK <= n; i += BLOCK) {                                           \
                T hit = 0; /* in the units' own width: twice the lanes for UCS-2 */        \
                for (int k = 0; k < BLOCK; k++)                                            \
                    hit |= (T)(((d)[i + k] & (T)0xF800) == (T)0xD800);                     \
                if (hit)                                                                   \
                    break;                                                                 \
            }                                                                              \
            for (Py_ssize_t stop = i + BLOCK < n ? i + BLOCK : n; i < stop; i++) {         \
                Py_UCS4 c = (d)[i];                                                        \
                if (IS_SURROGATE(c)) {                                                     \
                    if (IS_HIGH(c) && i + 1 < n && IS_LOW((Py_UCS4)(d)[i + 1]))            \
                        return 2;                                                          \
                    state = 1;                                                             \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
    } while (0)

/* 0: no surrogate; 1: lone surrogates only; 2: a high surrogate followed by a low one. */
static int
surrogate_state(PyObject *s)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(s);
    int kind = PyUnicode_KIND(s);
    int state = 0;
    if (kind == PyUnicode_1BYTE_KIND)
        return 0;
    if (kind == PyUnicode_2BYTE_KIND) {
        const Py_UCS2 *d = PyUnicode_2BYTE_DATA(s);
        SURROGATE_SCAN(Py_UCS2, d);
    }
    else {
        const Py_UCS4 *d = PyUnicode_4BYTE_DATA(s);
        SURROGATE_SCAN(Py_UCS4, d);
    }
    return state;
}

static PyObject *
fast_surrogates(PyObject *module, PyObject *s)
{
    if (!PyUnicode_Check(s)) {
        PyErr_SetString(PyExc_TypeError, "surrogates() needs a str");
        return NULL;
    }
    ENSURE_READY(s);
    return PyLong_FromLong(surrogate_state(s));
}

/* ---- substring search ------------------------------------------------------------- */

/* First i in [start, stop) with d[i + j] == needle[j] for all j < m (m >= 2, i + m <= n):
 * a block of candidates is kept when both its first and last needle unit match, the
 * generic vectorised substring search; a rare pair of units at the needle's distance
 * makes almost every block a miss in any text. */
#define FIND_SCAN(T, d)                                                                    \
    do {                                                                                   \
        const T *t = (const T *)(d);                                                       \
        Py_UCS4 first = PyUnicode_READ(nkind, ndata, 0);                                   \
        Py_UCS4 last = PyUnicode_READ(nkind, ndata, m - 1);                                \
        Py_ssize_t i = start, limit = stop - m + 1; /* candidates are [start, limit) */    \
        while (i < limit) {                                                                \
            for (; i + BLOCK <= limit; i += BLOCK) {                                       \
                T hit = 0;                                                                 \
                for (int k = 0; k < BLOCK; k++)                                            \
                    hit |= (T)((t[i + k] == (T)first) & (t[i + k + m - 1] == (T)last));    \
                if (hit)                                                                   \
                    break;                                                                 \
            }                                                                              \
            for (Py_ssize_t block = i + BLOCK < limit ? i + BLOCK : limit; i < block; i++) { \
                if ((Py_UCS4)t[i] != first || (Py_UCS4)t[i + m - 1] != last)               \
                    continue;                                                              \
                Py_ssize_t j = 1;                                                          \
                while (j < m - 1 && (Py_UCS4)t[i + j] == PyUnicode_READ(nkind, ndata, j))  \
                    j++;                                                                   \
                if (j >= m - 1)                                                            \
                    return PyLong_FromSsize_t(i);                                          \
            }                                                                              \
        }                                                                                  \
    } while (0)

static PyObject *
fast_find(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4 || !PyUnicode_Check(args[0]) || !PyUnicode_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "find(text, needle, start, end) needs two str");
        return NULL;
    }
    PyObject *text = args[0], *needle = args[1];
    ENSURE_READY(text);
    ENSURE_READY(needle);
    Py_ssize_t start = PyLong_AsSsize_t(args[2]), stop = PyLong_AsSsize_t(args[3]);
    if ((start == -1 || stop == -1) && PyErr_Occurred())
        return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), m = PyUnicode_GET_LENGTH(needle);
    if (start < 0 || stop < start) {
        PyErr_SetString(PyExc_ValueError, "find() needs 0 <= start <= end");
        return NULL;
    }
    if (stop > n)
        stop = n;
    int kind = PyUnicode_KIND(text), nkind = PyUnicode_KIND(needle);
    if (m < 2 || nkind > kind) /* a one-unit needle, or one the text cannot hold */
        return PyLong_FromSsize_t(PyUnicode_Find(text, needle, start, stop, 1));
    const void *ndata = PyUnicode_DATA(needle);
    if (kind == PyUnicode_1BYTE_KIND)
        FIND_SCAN(Py_UCS1, PyUnicode_DATA(text));
    else if (kind == PyUnicode_2BYTE_KIND)
        FIND_SCAN(Py_UCS2, PyUnicode_DATA(text));
    else
        FIND_SCAN(Py_UCS4, PyUnicode_DATA(text));
    return PyLong_FromLong(-1);
}

/* ---- Buffer.byteLength ------------------------------------------------------------- */

/* Add to total the extra UTF-8 bytes (beyond one per unit) of the n units at data:
 * per block in a narrow accumulator (at most 3 * BLOCK), which keeps the vector lanes
 * as narrow as the units. */
#define LENGTH_SCAN(T, data, extra)                                                        \
    do {                                                                                   \
        const T *d = (data);                                                               \
        Py_ssize_t i = 0;                                                                  \
        for (; i + BLOCK <= n; i += BLOCK) {                                               \
            T part = 0;                                                                    \
            for (int k = 0; k < BLOCK; k++)                                                \
                part += (T)(extra);                                                        \
            total += part;                                                                 \
        }                                                                                  \
        for (int k = 0; i + k < n; k++)                                                    \
            total += (extra);                                                              \
    } while (0)

/* Buffer.byteLength of s counting every surrogate as 3 bytes: exact unless s holds a
 * pair as two code points (surrogate_state 2). */
static Py_ssize_t
length_if_no_pair(PyObject *s)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(s);
    int kind = PyUnicode_KIND(s);
    Py_ssize_t total = n;
    if (PyUnicode_IS_ASCII(s))
        return n;
    if (kind == PyUnicode_1BYTE_KIND)
        LENGTH_SCAN(Py_UCS1, PyUnicode_1BYTE_DATA(s), (d[i + k] >> 7));
    else if (kind == PyUnicode_2BYTE_KIND)
        LENGTH_SCAN(Py_UCS2, PyUnicode_2BYTE_DATA(s), (d[i + k] >= 0x80) + (d[i + k] >= 0x800));
    else
        LENGTH_SCAN(Py_UCS4, PyUnicode_4BYTE_DATA(s),
                    (d[i + k] >= 0x80) + (d[i + k] >= 0x800) + (d[i + k] >= 0x10000));
    return total;
}

static PyObject *
fast_utf8_length(PyObject *module, PyObject *s)
{
    if (!PyUnicode_Check(s)) {
        PyErr_SetString(PyExc_TypeError, "utf8_length() needs a str");
        return NULL;
    }
    ENSURE_READY(s);
    Py_ssize_t total = length_if_no_pair(s);
    /* A lone surrogate counts 3 (as U+FFFD), which the scan gave it; a pair held as two
     * code points is one astral character: 4 bytes, not 3 + 3. */
    if (!PyUnicode_IS_ASCII(s) && surrogate_state(s) == 2) {
        Py_ssize_t n = PyUnicode_GET_LENGTH(s);
        int kind = PyUnicode_KIND(s);
        for (Py_ssize_t i = 0; i + 1 < n; i++) {
            if (IS_HIGH(PyUnicode_READ(kind, PyUnicode_DATA(s), i)) &&
                IS_LOW(PyUnicode_READ(kind, PyUnicode_DATA(s), i + 1))) {
                total -= 2;
                i++;
            }
        }
    }
    return PyLong_FromSsize_t(total);
}

/* utf8_length(s) when s is canonical (no pair held as two code points), else -1: one
 * surrogate scan and one length scan, what projection needs of every message text. */
static PyObject *
fast_canonical_length(PyObject *module, PyObject *s)
{
    if (!PyUnicode_Check(s)) {
        PyErr_SetString(PyExc_TypeError, "canonical_length() needs a str");
        return NULL;
    }
    ENSURE_READY(s);
    if (!PyUnicode_IS_ASCII(s) && surrogate_state(s) == 2)
        return PyLong_FromLong(-1);
    return PyLong_FromSsize_t(length_if_no_pair(s));
}

/* ---- JSON.stringify of a string, then base64url ----------------------------------- */

static const char HEX[] = "0123456789abcdef";
static const char B64URL[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* Write JSON.stringify(s) as UTF-8 into out (room for 6 * len + 2 bytes); return its size. */
static Py_ssize_t
quote_into(PyObject *s, unsigned char *out)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(s);
    int kind = PyUnicode_KIND(s);
    const void *data = PyUnicode_DATA(s);
    unsigned char *p = out;
    *p++ = '"';
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c < 0x80) {
            if (c >= 0x20 && c != '"' && c != '\\') {
                *p++ = (unsigned char)c;
                continue;
            }
            *p++ = '\\';
            switch (c) {
            case '"': *p++ = '"'; break;
            case '\\': *p++ = '\\'; break;
            case '\b': *p++ = 'b'; break;
            case '\t': *p++ = 't'; break;
            case '\n': *p++ = 'n'; break;
            case '\f': *p++ = 'f'; break;
            case '\r': *p++ = 'r'; break;
            default:
                *p++ = 'u'; *p++ = '0'; *p++ = '0';
                *p++ = HEX[c >> 4]; *p++ = HEX[c & 15];
            }
        }
        else if (c < 0x800) {
            *p++ = (unsigned char)(0xC0 | (c >> 6));
            *p++ = (unsigned char)(0x80 | (c & 0x3F));
        }
        else if (IS_SURROGATE(c)) {
            if (IS_HIGH(c) && i + 1 < n && IS_LOW(PyUnicode_READ(kind, data, i + 1))) {
                Py_UCS4 low = PyUnicode_READ(kind, data, ++i);
                c = 0x10000 + ((c - 0xD800) << 10) + (low - 0xDC00);
                goto astral;
            }
            *p++ = '\\'; *p++ = 'u';
            *p++ = HEX[c >> 12]; *p++ = HEX[(c >> 8) & 15];
            *p++ = HEX[(c >> 4) & 15]; *p++ = HEX[c & 15];
        }
        else if (c < 0x10000) {
            *p++ = (unsigned char)(0xE0 | (c >> 12));
            *p++ = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
            *p++ = (unsigned char)(0x80 | (c & 0x3F));
        }
        else {
        astral:
            *p++ = (unsigned char)(0xF0 | (c >> 18));
            *p++ = (unsigned char)(0x80 | ((c >> 12) & 0x3F));
            *p++ = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
            *p++ = (unsigned char)(0x80 | (c & 0x3F));
        }
    }
    *p++ = '"';
    return p - out;
}

#define STACK_BYTES 512

static PyObject *
fast_quote_base64url(PyObject *module, PyObject *s)
{
    if (!PyUnicode_Check(s)) {
        PyErr_SetString(PyExc_TypeError, "quote_base64url() needs a str");
        return NULL;
    }
    ENSURE_READY(s);
    Py_ssize_t n = PyUnicode_GET_LENGTH(s);
    if (n > (PY_SSIZE_T_MAX - 2) / 6)
        return PyErr_NoMemory();
    unsigned char stack[STACK_BYTES];
    unsigned char *buf = stack;
    if (6 * n + 2 > STACK_BYTES) {
        buf = PyMem_Malloc(6 * n + 2);
        if (buf == NULL)
            return PyErr_NoMemory();
    }
    Py_ssize_t size = quote_into(s, buf);
    Py_ssize_t full = size / 3, rest = size % 3;
    PyObject *result = PyUnicode_New(full * 4 + (rest ? rest + 1 : 0), 127);
    if (result != NULL) {
        Py_UCS1 *o = PyUnicode_1BYTE_DATA(result);
        const unsigned char *b = buf;
        for (Py_ssize_t i = 0; i < full; i++, b += 3) {
            uint32_t v = ((uint32_t)b[0] << 16) | ((uint32_t)b[1] << 8) | b[2];
            *o++ = B64URL[v >> 18];
            *o++ = B64URL[(v >> 12) & 63];
            *o++ = B64URL[(v >> 6) & 63];
            *o++ = B64URL[v & 63];
        }
        if (rest == 1) {
            *o++ = B64URL[b[0] >> 2];
            *o++ = B64URL[(b[0] & 3) << 4];
        }
        else if (rest == 2) {
            *o++ = B64URL[b[0] >> 2];
            *o++ = B64URL[((b[0] & 3) << 4) | (b[1] >> 4)];
            *o++ = B64URL[(b[1] & 15) << 2];
        }
    }
    if (buf != stack)
        PyMem_Free(buf);
    return result;
}

/* ---- the strict inverse: base64url, then the one JSON.stringify spelling ---------- */

static signed char B64URL_VALUE[256];

static int
hex_lower(const unsigned char *p, Py_UCS4 *out)
{
    Py_UCS4 v = 0;
    for (int k = 0; k < 4; k++) {
        unsigned char h = p[k];
        if (h >= '0' && h <= '9')
            v = (v << 4) | (Py_UCS4)(h - '0');
        else if (h >= 'a' && h <= 'f')
            v = (v << 4) | (Py_UCS4)(h - 'a' + 10);
        else
            return 0;
    }
    *out = v;
    return 1;
}

/* Parse b[0..n) as exactly the JSON.stringify spelling of a string into out (room for n
 * code points); return the number of code points, or -1 when it is not that spelling. */
static Py_ssize_t
unquote_into(const unsigned char *b, Py_ssize_t n, Py_UCS4 *out)
{
    if (n < 2 || b[0] != '"' || b[n - 1] != '"')
        return -1;
    Py_ssize_t count = 0, i = 1, end = n - 1;
    Py_UCS4 previous = 0;
    while (i < end) {
        unsigned char c = b[i];
        Py_UCS4 cp;
        if (c == '\\') {
            if (i + 1 >= end)
                return -1;
            switch (b[i + 1]) {
            case '"': cp = '"'; i += 2; break;
            case '\\': cp = '\\'; i += 2; break;
            case 'b': cp = '\b'; i += 2; break;
            case 't': cp = '\t'; i += 2; break;
            case 'n': cp = '\n'; i += 2; break;
            case 'f': cp = '\f'; i += 2; break;
            case 'r': cp = '\r'; i += 2; break;
            case 'u':
                if (i + 6 > end || !hex_lower(b + i + 2, &cp))
                    return -1;
                i += 6;
                if (cp < 0x20) {
                    if (cp == '\b' || cp == '\t' || cp == '\n' || cp == '\f' || cp == '\r')
                        return -1; /* has a short escape */
                }
                else if (!IS_SURROGATE(cp) || (IS_LOW(cp) && IS_HIGH(previous)))
                    return -1; /* written raw, or an escaped pair (written as its character) */
                break;
            default:
                return -1;
            }
        }
        else if (c < 0x80) {
            if (c < 0x20 || c == '"')
                return -1;
            cp = c;
            i += 1;
        }
        else if (c >= 0xC2 && c <= 0xDF) {
            if (i + 2 > end || (b[i + 1] & 0xC0) != 0x80)
                return -1;
            cp = ((Py_UCS4)(c & 0x1F) << 6) | (b[i + 1] & 0x3F);
            i += 2;
        }
        else if (c >= 0xE0 && c <= 0xEF) {
            if (i + 3 > end || (b[i + 1] & 0xC0) != 0x80 || (b[i + 2] & 0xC0) != 0x80)
                return -1;
            cp = ((Py_UCS4)(c & 0x0F) << 12) | ((Py_UCS4)(b[i + 1] & 0x3F) << 6) |
                 (b[i + 2] & 0x3F);
            if (cp < 0x800 || IS_SURROGATE(cp))
                return -1; /* overlong, or a surrogate in UTF-8 */
            i += 3;
        }
        else if (c >= 0xF0 && c <= 0xF4) {
            if (i + 4 > end || (b[i + 1] & 0xC0) != 0x80 || (b[i + 2] & 0xC0) != 0x80 ||
                (b[i + 3] & 0xC0) != 0x80)
                return -1;
            cp = ((Py_UCS4)(c & 0x07) << 18) | ((Py_UCS4)(b[i + 1] & 0x3F) << 12) |
                 ((Py_UCS4)(b[i + 2] & 0x3F) << 6) | (b[i + 3] & 0x3F);
            if (cp < 0x10000 || cp > 0x10FFFF)
                return -1;
            i += 4;
        }
        else
            return -1;
        out[count++] = cp;
        previous = cp;
    }
    return count;
}

static PyObject *
not_canonical(void)
{
    PyErr_SetString(PyExc_ValueError, "not the base64url of a JSON.stringify string");
    return NULL;
}

static PyObject *
fast_unquote_base64url(PyObject *module, PyObject *payload)
{
    if (!PyUnicode_Check(payload)) {
        PyErr_SetString(PyExc_TypeError, "unquote_base64url() needs a str");
        return NULL;
    }
    ENSURE_READY(payload);
    if (!PyUnicode_IS_ASCII(payload))
        return not_canonical();
    Py_ssize_t n = PyUnicode_GET_LENGTH(payload);
    if (n % 4 == 1)
        return not_canonical();
    const Py_UCS1 *p = PyUnicode_1BYTE_DATA(payload);
    Py_ssize_t size = n / 4 * 3 + (n % 4 ? n % 4 - 1 : 0);
    /* One allocation: the decoded bytes, then room for as many code points. */
    size_t need = (size_t)size + (size_t)size * sizeof(Py_UCS4) + sizeof(Py_UCS4);
    unsigned char stack[STACK_BYTES * 5];
    unsigned char *buf = stack;
    if (need > sizeof stack) {
        buf = PyMem_Malloc(need);
        if (buf == NULL)
            return PyErr_NoMemory();
    }
    PyObject *result = NULL;
    unsigned char *o = buf;
    Py_ssize_t i = 0;
    for (; i + 4 <= n; i += 4) {
        int a = B64URL_VALUE[p[i]], b = B64URL_VALUE[p[i + 1]];
        int c = B64URL_VALUE[p[i + 2]], d = B64URL_VALUE[p[i + 3]];
        if ((a | b | c | d) < 0)
            goto done;
        uint32_t v = ((uint32_t)a << 18) | ((uint32_t)b << 12) | ((uint32_t)c << 6) | (uint32_t)d;
        *o++ = (unsigned char)(v >> 16);
        *o++ = (unsigned char)(v >> 8);
        *o++ = (unsigned char)v;
    }
    if (n - i == 2) {
        int a = B64URL_VALUE[p[i]], b = B64URL_VALUE[p[i + 1]];
        if ((a | b) < 0 || (b & 15))
            goto done; /* non-zero unused bits */
        *o++ = (unsigned char)((a << 2) | (b >> 4));
    }
    else if (n - i == 3) {
        int a = B64URL_VALUE[p[i]], b = B64URL_VALUE[p[i + 1]], c = B64URL_VALUE[p[i + 2]];
        if ((a | b | c) < 0 || (c & 3))
            goto done;
        *o++ = (unsigned char)((a << 2) | (b >> 4));
        *o++ = (unsigned char)(((b & 15) << 4) | (c >> 2));
    }
    {
        Py_UCS4 *points = (Py_UCS4 *)(buf + ((size + sizeof(Py_UCS4) - 1) / sizeof(Py_UCS4)) *
                                                sizeof(Py_UCS4));
        Py_ssize_t count = unquote_into(buf, size, points);
        if (count >= 0)
            result = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, points, count);
    }
done:
    if (buf != stack)
        PyMem_Free(buf);
    if (result == NULL && !PyErr_Occurred())
        return not_canonical();
    return result;
}

/* ---- what orjson writes exactly as JSON.stringify does --------------------------- */

#define PLAIN_DEPTH 64
#define SAFE_INT (1LL << 53)

/* jsstr._plain: only exact dict, list, tuple, str, bool, None and safe integers, no key
 * that starts with a digit, no nesting deeper than PLAIN_DEPTH. */
static int
plain(PyObject *value, int depth)
{
    if (PyUnicode_CheckExact(value) || PyBool_Check(value) || value == Py_None)
        return 1;
    if (PyLong_CheckExact(value)) {
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
        if (v == -1 && PyErr_Occurred())
            return -1;
        return !overflow && v >= -SAFE_INT && v <= SAFE_INT;
    }
    if (depth > PLAIN_DEPTH)
        return 0;
    if (PyDict_CheckExact(value)) {
        Py_ssize_t pos = 0;
        PyObject *key, *item;
        while (PyDict_Next(value, &pos, &key, &item)) {
            if (!PyUnicode_CheckExact(key))
                return 0;
            ENSURE_READY_INT(key);
            if (PyUnicode_GET_LENGTH(key) &&
                Py_UNICODE_ISDIGIT(PyUnicode_READ_CHAR(key, 0)))
                return 0;
            if (!PyUnicode_CheckExact(item)) {
                int ok = plain(item, depth + 1);
                if (ok <= 0)
                    return ok;
            }
        }
        return 1;
    }
    if (PyList_CheckExact(value) || PyTuple_CheckExact(value)) {
        Py_ssize_t n = PySequence_Fast_GET_SIZE(value);
        PyObject **items = PySequence_Fast_ITEMS(value);
        for (Py_ssize_t i = 0; i < n; i++) {
            if (!PyUnicode_CheckExact(items[i])) {
                int ok = plain(items[i], depth + 1);
                if (ok <= 0)
                    return ok;
            }
            /* a list can shrink under a callee only through Python code: none runs here */
        }
        return 1;
    }
    return 0;
}

static PyObject *
fast_plain(PyObject *module, PyObject *value)
{
    int ok = plain(value, 0);
    if (ok < 0)
        return NULL;
    return PyBool_FromLong(ok);
}

/* ---- protocol lines spelled exactly as JSON.stringify spells them ----------------- */

/* Writes v in decimal at buf (room for 21 bytes); returns the length. */
static int
decimal(long long v, char *buf)
{
    char digits[21];
    int n = 0, k = 0;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do {
        digits[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        buf[k++] = '-';
    while (n)
        buf[k++] = digits[--n];
    return k;
}

/* Writes {"id":<id>,"result": at head (room for 48 bytes); returns its length.  The
 * head of a reply line as orjson writes {"id": id, "result": ...}. */
static int
reply_head(long long id, char *head)
{
    memcpy(head, "{\"id\":", 6);
    int k = 6 + decimal(id, head + 6);
    memcpy(head + k, ",\"result\":", 10);
    return k + 10;
}

/* The bytes of {"id":<id>,"result":<dumped> followed by "}\n": the reply line, framed
 * as orjson frames it, around a result already written. */
static PyObject *
framed_reply(long long id, PyObject *dumped)
{
    char head[48];
    int k = reply_head(id, head);
    Py_ssize_t m = PyBytes_GET_SIZE(dumped);
    PyObject *line = PyBytes_FromStringAndSize(NULL, k + m + 2);
    if (line == NULL)
        return NULL;
    char *d = PyBytes_AS_STRING(line);
    memcpy(d, head, k);
    memcpy(d + k, PyBytes_AS_STRING(dumped), m);
    d[k + m] = '}';
    d[k + m + 1] = '\n';
    return line;
}

static int
is_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '.' || c == '_' || c == '-';
}

/* The op names of a batch repeat: the last one is kept, so its hash is computed once. */
static PyObject *LAST_OP;

static PyObject *
op_name(const char *s, Py_ssize_t n)
{
    if (LAST_OP != NULL && PyUnicode_GET_LENGTH(LAST_OP) == n &&
        memcmp(PyUnicode_1BYTE_DATA(LAST_OP), s, (size_t)n) == 0) {
        Py_INCREF(LAST_OP);
        return LAST_OP;
    }
    PyObject *op = PyUnicode_FromStringAndSize(s, n); /* ASCII: is_name_char */
    if (op == NULL)
        return NULL;
    Py_INCREF(op);
    Py_XSETREF(LAST_OP, op);
    return op;
}

/* A request line spelled exactly {"id":N,"op":"NAME","args":{...}} -- N a JSON integer of
 * at most 15 digits (below 2**53), NAME of ASCII letters, digits, '.', '_' and '-', args a
 * plain object -- read without building the outer object, which loads(line) would build
 * with these same three members.  1 with new references in *id, *op and *arguments; 0 when
 * the line is spelled in any other way (the caller reads it whole); -1 on an error. */
static int
unframe_request(PyObject *line, PyObject *loads, PyObject **id, PyObject **op,
                PyObject **arguments)
{
    const char *s = PyBytes_AS_STRING(line);
    Py_ssize_t n = PyBytes_GET_SIZE(line), p = 6, digits = 0;
    if (n < 28 || memcmp(s, "{\"id\":", 6) != 0 || s[n - 1] != '}')
        return 0;
    long long v = 0;
    if (s[p] == '0') {
        p++;
        digits = 1;
    }
    else {
        for (; p < n && s[p] >= '0' && s[p] <= '9' && digits <= 15; p++, digits++)
            v = v * 10 + (s[p] - '0');
    }
    if (digits == 0 || digits > 15 || n - p < 7 || memcmp(s + p, ",\"op\":\"", 7) != 0)
        return 0;
    Py_ssize_t name = p += 7;
    while (p < n && is_name_char(s[p]))
        p++;
    Py_ssize_t name_end = p;
    if (name_end == name || n - p < 10 || memcmp(s + p, "\",\"args\":", 9) != 0)
        return 0;
    p += 9;
    PyObject *raw = PyBytes_FromStringAndSize(s + p, n - 1 - p);
    if (raw == NULL)
        return -1;
    PyObject *value = PyObject_CallOneArg(loads, raw);
    Py_DECREF(raw);
    if (value == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_ValueError)) /* orjson.JSONDecodeError */
            return -1;
        PyErr_Clear();
        return 0;
    }
    int ok = PyDict_CheckExact(value) ? plain(value, 1) : 0; /* as plain(message, 0) sees it */
    if (ok > 0) {
        *op = op_name(s + name, name_end - name);
        *id = *op == NULL ? NULL : PyLong_FromLongLong(v);
        if (*id == NULL) {
            Py_XDECREF(*op);
            ok = -1;
        }
    }
    if (ok <= 0) {
        Py_DECREF(value);
        return ok;
    }
    *arguments = value;
    return 1;
}

/* The result of a reply line spelled exactly {"id":<id>,"result":<value>}, value plain:
 * loads(line)["result"], read without building the two-member object loads(line) would.
 * NULL without an error when the line is spelled in any other way. */
static PyObject *
unframe_result(PyObject *line, long long id, PyObject *loads)
{
    char head[48];
    int k = reply_head(id, head);
    const char *s = PyBytes_AS_STRING(line);
    Py_ssize_t n = PyBytes_GET_SIZE(line);
    if (n <= k + 1 || s[n - 1] != '}' || memcmp(s, head, (size_t)k) != 0)
        return NULL;
    PyObject *raw = PyBytes_FromStringAndSize(s + k, n - 1 - k);
    if (raw == NULL)
        return NULL;
    PyObject *value = PyObject_CallOneArg(loads, raw);
    Py_DECREF(raw);
    if (value == NULL) {
        if (PyErr_ExceptionMatches(PyExc_ValueError)) /* orjson.JSONDecodeError */
            PyErr_Clear();
        return NULL;
    }
    int ok = plain(value, 1); /* as plain(reply, 0) sees it */
    if (ok <= 0) {
        Py_DECREF(value);
        return NULL;
    }
    return value;
}

/* ---- the served model's loop over plain request lines ---------------------------- */

/* Interned at module start: dict lookups by these keys hash nothing. */
static PyObject *KEY_ID, *KEY_OP, *KEY_ARGS, *KEY_RESULT, *KW_OPTION;

/* 1 when value is the str text (exact), else 0. */
static int
is_text(PyObject *value, const char *text)
{
    return PyUnicode_CheckExact(value) && PyUnicode_CompareWithASCIIString(value, text) == 0;
}

/* answer(lines, start, call, loads, dumps, option, pending): adapters/serve.py's batch loop for
 * plain operation requests, unrolled.  From lines[start], each line that loads(line)
 * reads as a plain {id, op, args} object (id an int or str, op a str other than
 * handshake and shutdown, args a dict) is answered with dumps({"id": id, "result":
 * call(op, args)}, option=option) appended to pending.  It stops at the first line it cannot finish:
 *   i             line i was not touched (the caller answers it the general way);
 *   (i, id, x)    call ran for line i and the caller writes the reply: x is the
 *                 exception call raised, or the reply dict dumps cannot write exactly;
 *   len(lines)    every line was answered.
 * A BaseException that is not an Exception (KeyboardInterrupt) propagates.  A request
 * spelled as JSON.stringify spells it with an integer id has only its args read
 * (unframe_request), and a reply to an integer id is framed around dumps(result)
 * (framed_reply): neither outer object is built (callgrind, a small call: 13.8K -> 9.4K
 * instructions in the served model, and 11.3K -> 9.4K in the harness). */
static PyObject *
fast_answer(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 7 || !PyList_CheckExact(args[0]) || !PyList_CheckExact(args[6])) {
        PyErr_SetString(PyExc_TypeError,
                        "answer(lines, start, call, loads, dumps, option, pending) needs two lists");
        return NULL;
    }
    PyObject *lines = args[0], *call = args[2], *loads = args[3], *dumps = args[4];
    PyObject *option = args[5], *pending = args[6];
    PyObject *kwnames = PyTuple_Pack(1, KW_OPTION);
    if (kwnames == NULL)
        return NULL;
    PyObject *out = NULL;
    Py_ssize_t i = PyLong_AsSsize_t(args[1]);
    if (i == -1 && PyErr_Occurred())
        return NULL;
    for (; i < PyList_GET_SIZE(lines); i++) {
        PyObject *line = PyList_GET_ITEM(lines, i);
        PyObject *id = NULL, *op = NULL, *arguments = NULL;
        Py_INCREF(line);
        int ok = PyBytes_CheckExact(line) ? unframe_request(line, loads, &id, &op, &arguments) : 0;
        if (ok == 0) { /* read whole */
            PyObject *message = PyObject_CallOneArg(loads, line);
            if (message == NULL) {
                Py_DECREF(line);
                if (PyErr_ExceptionMatches(PyExc_ValueError)) { /* orjson.JSONDecodeError */
                    PyErr_Clear();
                    out = PyLong_FromSsize_t(i);
                }
                goto done;
            }
            ok = PyDict_CheckExact(message) && PyDict_GET_SIZE(message) == 3;
            if (ok)
                ok = plain(message, 0);
            if (ok > 0) {
                id = PyDict_GetItem(message, KEY_ID); /* borrowed; message keeps them */
                op = PyDict_GetItem(message, KEY_OP);
                arguments = PyDict_GetItem(message, KEY_ARGS);
                ok = id != NULL && op != NULL && arguments != NULL &&
                     (PyLong_CheckExact(id) || PyUnicode_CheckExact(id)) &&
                     PyUnicode_CheckExact(op) && PyDict_CheckExact(arguments);
                if (ok) {
                    Py_INCREF(id);
                    Py_INCREF(op);
                    Py_INCREF(arguments);
                }
            }
            Py_DECREF(message);
        }
        Py_DECREF(line);
        if (ok < 0)
            goto done;
        if (ok && (is_text(op, "handshake") || is_text(op, "shutdown"))) {
            Py_DECREF(id);
            Py_DECREF(op);
            Py_DECREF(arguments);
            ok = 0;
        }
        if (!ok) {
            out = PyLong_FromSsize_t(i);
            goto done;
        }
        PyObject *call_args[2] = {op, arguments};
        PyObject *result = PyObject_Vectorcall(call, call_args, 2, NULL);
        Py_DECREF(op);
        Py_DECREF(arguments);
        if (result == NULL) {
            if (!PyErr_ExceptionMatches(PyExc_Exception)) {
                Py_DECREF(id);
                goto done;
            }
            PyObject *type, *value, *traceback;
            PyErr_Fetch(&type, &value, &traceback);
            PyErr_NormalizeException(&type, &value, &traceback);
            if (traceback != NULL)
                PyException_SetTraceback(value, traceback);
            Py_XDECREF(type);
            Py_XDECREF(traceback);
            out = Py_BuildValue("(nNN)", i, id, value);
            goto done;
        }
        PyObject *written = NULL;
        if (PyLong_CheckExact(id)) {
            /* An integer id (a safe one: plain) frames the result as dumps frames it in
             * {"id": id, "result": result}, with no object built. */
            ok = plain(result, 1);
            if (ok < 0) {
                Py_DECREF(result);
                Py_DECREF(id);
                goto done;
            }
            if (ok) {
                PyObject *dumped = PyObject_CallOneArg(dumps, result);
                if (dumped != NULL) {
                    written = framed_reply(PyLong_AsLongLong(id), dumped);
                    Py_DECREF(dumped);
                    if (written == NULL) {
                        Py_DECREF(result);
                        Py_DECREF(id);
                        goto done;
                    }
                }
                else if (PyErr_ExceptionMatches(PyExc_TypeError)) /* a lone surrogate */
                    PyErr_Clear();
                else {
                    Py_DECREF(result);
                    Py_DECREF(id);
                    goto done;
                }
            }
        }
        if (written == NULL) {
            PyObject *reply = PyDict_New();
            if (reply == NULL || PyDict_SetItem(reply, KEY_ID, id) < 0 ||
                PyDict_SetItem(reply, KEY_RESULT, result) < 0) {
                Py_XDECREF(reply);
                Py_DECREF(id);
                Py_DECREF(result);
                goto done;
            }
            Py_DECREF(result);
            result = NULL;
            ok = PyUnicode_CheckExact(id) ? plain(reply, 0) : 0;
            if (ok < 0) {
                Py_DECREF(reply);
                Py_DECREF(id);
                goto done;
            }
            if (ok) {
                PyObject *dump_args[2] = {reply, option};
                written = PyObject_Vectorcall(dumps, dump_args, 1, kwnames);
            }
            if (written == NULL) {
                if (ok) {
                    if (!PyErr_ExceptionMatches(PyExc_TypeError)) { /* a lone surrogate */
                        Py_DECREF(reply);
                        Py_DECREF(id);
                        goto done;
                    }
                    PyErr_Clear();
                }
                out = Py_BuildValue("(nNN)", i, id, reply);
                goto done;
            }
            Py_DECREF(reply);
        }
        Py_XDECREF(result);
        Py_DECREF(id);
        int appended = PyList_Append(pending, written);
        Py_DECREF(written);
        if (appended < 0)
            goto done;
    }
    out = PyLong_FromSsize_t(i);
done:
    Py_DECREF(kwnames);
    return out;
}

/* take(batch, index, arrived, popleft, appendleft, loads, out): adapters/subprocess.py's
 * reply loop for the common answer, unrolled.  While lines have arrived, a reply line
 * that loads reads as a plain {"id": id, "result": result} object, id the exact integer
 * of the request batch[index][1] awaits, puts result on out and moves on.  Anything else
 * (an event that is not a line, any other reply) goes back to the front of arrived for
 * the caller's full check.  Returns the index of the first request still unanswered.
 * The reply as the served model spells it, {"id":<id>,"result":<value>} byte for byte,
 * has only its value read (unframe_result): the outer object is never built. */
static PyObject *
fast_take(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 7 || !PyList_CheckExact(args[0]) || !PyList_CheckExact(args[6])) {
        PyErr_SetString(PyExc_TypeError,
                        "take(batch, index, arrived, popleft, appendleft, loads, out) needs lists");
        return NULL;
    }
    PyObject *batch = args[0], *arrived = args[2], *popleft = args[3];
    PyObject *appendleft = args[4], *loads = args[5], *out = args[6];
    Py_ssize_t i = PyLong_AsSsize_t(args[1]);
    if (i == -1 && PyErr_Occurred())
        return NULL;
    for (; i < PyList_GET_SIZE(batch); i++) {
        Py_ssize_t waiting = PyObject_Size(arrived);
        if (waiting < 0)
            return NULL;
        if (waiting == 0)
            break;
        PyObject *request = PyList_GET_ITEM(batch, i);
        if (!PyTuple_CheckExact(request) || PyTuple_GET_SIZE(request) != 2 ||
            !PyDict_CheckExact(PyTuple_GET_ITEM(request, 1)))
            break;
        PyObject *id = PyDict_GetItem(PyTuple_GET_ITEM(request, 1), KEY_ID); /* borrowed */
        if (id == NULL || !PyLong_CheckExact(id))
            break;
        PyObject *line = PyObject_CallNoArgs(popleft);
        if (line == NULL)
            return NULL;
        int taken = 0;
        int overflow = 0;
        long long expected = PyLong_AsLongLongAndOverflow(id, &overflow);
        if (expected == -1 && PyErr_Occurred()) {
            Py_DECREF(line);
            return NULL;
        }
        if (PyBytes_CheckExact(line) && !overflow) {
            /* The reply spelled as the served model spells it: only its result is read. */
            PyObject *result = unframe_result(line, expected, loads);
            if (result == NULL && PyErr_Occurred()) {
                Py_DECREF(line);
                return NULL;
            }
            if (result != NULL) {
                int appended = PyList_Append(out, result);
                Py_DECREF(result);
                if (appended < 0) {
                    Py_DECREF(line);
                    return NULL;
                }
                taken = 1;
            }
        }
        if (!taken && PyBytes_CheckExact(line)) {
            PyObject *reply = PyObject_CallOneArg(loads, line);
            if (reply == NULL) {
                if (!PyErr_ExceptionMatches(PyExc_ValueError)) { /* orjson.JSONDecodeError */
                    Py_DECREF(line);
                    return NULL;
                }
                PyErr_Clear();
            }
            else {
                PyObject *got, *result;
                int ok = PyDict_CheckExact(reply) && PyDict_GET_SIZE(reply) == 2 &&
                         (got = PyDict_GetItem(reply, KEY_ID)) != NULL && PyLong_CheckExact(got) &&
                         (result = PyDict_GetItem(reply, KEY_RESULT)) != NULL;
                if (ok)
                    ok = PyObject_RichCompareBool(got, id, Py_EQ);
                if (ok > 0)
                    ok = plain(reply, 0);
                if (ok > 0)
                    ok = PyList_Append(out, result) < 0 ? -1 : 1;
                Py_DECREF(reply);
                if (ok < 0) {
                    Py_DECREF(line);
                    return NULL;
                }
                taken = ok;
            }
        }
        if (!taken) {
            PyObject *back = PyObject_CallOneArg(appendleft, line);
            Py_DECREF(line);
            if (back == NULL)
                return NULL;
            Py_DECREF(back);
            break;
        }
        Py_DECREF(line);
    }
    return PyLong_FromSsize_t(i);
}

/* ---- module ------------------------------------------------------------------------ */

static PyMethodDef methods[] = {
    {"surrogates", fast_surrogates, METH_O,
     "0: no surrogate; 1: lone surrogates only; 2: a high surrogate followed by a low one."},
    {"find", (PyCFunction)(void (*)(void))fast_find, METH_FASTCALL,
     "str.find(needle, start, end) for 0 <= start <= end, vectorised for needles of 2+."},
    {"plain", fast_plain, METH_O,
     "Whether orjson spells value exactly as JSON.stringify does (jsstr._plain)."},
    {"utf8_length", fast_utf8_length, METH_O, "Node Buffer.byteLength(s, 'utf8')."},
    {"answer", (PyCFunction)(void (*)(void))fast_answer, METH_FASTCALL,
     "adapters/serve.py's loop over plain request lines (see the C source)."},
    {"take", (PyCFunction)(void (*)(void))fast_take, METH_FASTCALL,
     "adapters/subprocess.py's reply loop for the common answer (see the C source)."},
    {"canonical_length", fast_canonical_length, METH_O,
     "utf8_length(s) if s holds no surrogate pair as two code points, else -1."},
    {"quote_base64url", fast_quote_base64url, METH_O,
     "base64url (unpadded) of the UTF-8 of JSON.stringify(s)."},
    {"unquote_base64url", fast_unquote_base64url, METH_O,
     "The string whose quote_base64url is payload; ValueError when there is none."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_jsfast", "Accelerator for dsh_conformance.model.jsstr.", -1, methods,
};

PyMODINIT_FUNC
PyInit__jsfast(void)
{
    memset(B64URL_VALUE, -1, sizeof B64URL_VALUE);
    for (int k = 0; k < 64; k++)
        B64URL_VALUE[(unsigned char)B64URL[k]] = (signed char)k;
    KEY_ID = PyUnicode_InternFromString("id");
    KEY_OP = PyUnicode_InternFromString("op");
    KEY_ARGS = PyUnicode_InternFromString("args");
    KEY_RESULT = PyUnicode_InternFromString("result");
    KW_OPTION = PyUnicode_InternFromString("option");
    if (!KEY_ID || !KEY_OP || !KEY_ARGS || !KEY_RESULT || !KW_OPTION)
        return NULL;
    return PyModule_Create(&module_def);
}
