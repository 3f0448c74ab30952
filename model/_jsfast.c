/*
 * Optional accelerator for model/jsstr.py: the few JavaScript-string scans and the URI
 * payload codec that CPython cannot do at C speed in a handful of calls; two walks of
 * JSON values (D-501): spec/compiled.py's plain_json and model/frozen.py's thaw; and
 * projection's pass over a snapshot's events (D-538): model/snapshot.py's
 * _plain_projection; each with its pure-Python twin beside its caller.
 *
 * Every function here is a pure function of its arguments (strings, and integers for
 * find) with a pure-Python twin in jsstr.py that gives the same result on every input,
 * errors included (tests/test_accelerator.py compares them with Hypothesis and holds
 * each function to every hostile argument: wrong types, str subclasses, negative and
 * oversized ranges); jsstr.py is the readable definition and falls back to it when this
 * module is not built.  No function calls back into Python code, keeps a reference past
 * its return, or trusts an argument it has not checked (D-207).  Strings are read as
 * JavaScript sees them: UTF-16 code units, where a high surrogate followed by a low one
 * is one character even when CPython holds them as two code points.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
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

/* The short name of o's type, as type(o).__name__ spells it (tp_name after its last dot). */
static const char *
type_name(PyObject *o)
{
    const char *name = Py_TYPE(o)->tp_name;
    const char *dot = strrchr(name, '.');
    return dot != NULL ? dot + 1 : name;
}

/* 1 when s is a str (a subclass is read as its str value, never through its methods);
 * else 0 with jsstr's TypeError for fn. */
static int
need_str(PyObject *s, const char *fn)
{
    if (PyUnicode_Check(s))
        return 1;
    PyErr_Format(PyExc_TypeError, "%s() needs a str, not %.200s", fn, type_name(s));
    return 0;
}

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
    if (!need_str(s, "surrogates"))
        return NULL;
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

/* An index argument of find as jsstr.find reads it: an integer (anything with __index__)
 * clamped to [PY_SSIZE_T_MIN, PY_SSIZE_T_MAX], or none (end only) for the text's length.
 * 0 with jsstr's TypeError or ValueError. */
static int
find_index(PyObject *o, Py_ssize_t none, Py_ssize_t *out)
{
    if (o == Py_None && none >= 0) {
        *out = none;
        return 1;
    }
    if (!PyIndex_Check(o)) {
        PyErr_Format(PyExc_TypeError, "find() needs integer start and end, not %.200s",
                     type_name(o));
        return 0;
    }
    PyObject *index = PyNumber_Index(o);
    if (index == NULL)
        return 0;
    *out = PyNumber_AsSsize_t(index, NULL); /* clamped: no OverflowError */
    Py_DECREF(index);
    if (*out == -1 && PyErr_Occurred())
        return 0;
    if (*out < 0) {
        PyErr_SetString(PyExc_ValueError, "find() needs 0 <= start and 0 <= end");
        return 0;
    }
    return 1;
}

/* find(text, needle, start=0, end=None): text.find(needle, start, end) for start, end >= 0,
 * vectorised for needles of two units or more; every other case is str.find itself
 * (PyUnicode_Find), so the edges (start past the end, end before start, an empty or a
 * longer needle) are str.find's by construction. */
static PyObject *
fast_find(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 2 || nargs > 4) {
        PyErr_Format(PyExc_TypeError, "find() takes from 2 to 4 arguments (%zd given)", nargs);
        return NULL;
    }
    if (!need_str(args[0], "find") || !need_str(args[1], "find"))
        return NULL;
    PyObject *text = args[0], *needle = args[1];
    ENSURE_READY(text);
    ENSURE_READY(needle);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), m = PyUnicode_GET_LENGTH(needle);
    Py_ssize_t start = 0, stop = n;
    if (nargs > 2 && !find_index(args[2], -1, &start))
        return NULL;
    if (nargs > 3 && !find_index(args[3], n, &stop))
        return NULL;
    if (stop > n)
        stop = n;
    int kind = PyUnicode_KIND(text), nkind = PyUnicode_KIND(needle);
    /* a one-unit needle, one the text cannot hold, or a range too short for it */
    if (m < 2 || nkind > kind || start > stop - m)
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
    if (!need_str(s, "utf8_length"))
        return NULL;
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
    if (!need_str(s, "canonical_length"))
        return NULL;
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
    if (!need_str(s, "quote_base64url"))
        return NULL;
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
    if (!need_str(payload, "unquote_base64url"))
        return NULL;
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

#define MAX_ARRAY_INDEX 4294967294LL

/* The ECMAScript array index key spells (jsstr.is_array_index: the canonical decimal of
 * 0 .. 2**32 - 2, ASCII digits only), or -1 when it spells none. */
static long long
array_index(PyObject *key)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(key);
    if (n < 1 || n > 10)
        return -1;
    int kind = PyUnicode_KIND(key);
    const void *data = PyUnicode_DATA(key);
    if (n > 1 && PyUnicode_READ(kind, data, 0) == '0')
        return -1;
    long long v = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c < '0' || c > '9')
            return -1;
        v = v * 10 + (long long)(c - '0');
    }
    return v <= MAX_ARRAY_INDEX ? v : -1;
}

/* jsstr._plain: only exact dict, list, tuple, str, bool, None and safe integers, array-index
 * keys only where JSON.stringify writes them too (before every other key of their object,
 * ascending: D-497), no nesting deeper than PLAIN_DEPTH. */
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
        long long last = -1; /* the last array index seen */
        int ordinary = 0;    /* a key that is no array index was seen */
        while (PyDict_Next(value, &pos, &key, &item)) {
            if (!PyUnicode_CheckExact(key))
                return 0;
            ENSURE_READY_INT(key);
            long long index = array_index(key);
            if (index < 0) {
                ordinary = 1;
            } else if (ordinary || index <= last) {
                return 0; /* JSON.stringify would move this key: orjson keeps it here */
            } else {
                last = index;
            }
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

/* ---- what jsonschema-rs and jsonschema read alike (spec/compiled.py, D-500) ------- */

/* compiled.plain_json: only exact dict (with exact str keys), list, str, int, float,
 * bool and None, no container nested deeper than limit. */
static int
exact_json(PyObject *value, int depth, int limit)
{
    if (PyDict_CheckExact(value)) {
        if (depth >= limit)
            return 0;
        Py_ssize_t pos = 0;
        PyObject *key, *item;
        while (PyDict_Next(value, &pos, &key, &item)) {
            if (!PyUnicode_CheckExact(key))
                return 0;
            if (!PyUnicode_CheckExact(item) && !PyLong_CheckExact(item) &&
                !exact_json(item, depth + 1, limit))
                return 0;
        }
        return 1;
    }
    if (PyList_CheckExact(value)) {
        if (depth >= limit)
            return 0;
        Py_ssize_t n = PyList_GET_SIZE(value);
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *item = PyList_GET_ITEM(value, i);
            if (!PyUnicode_CheckExact(item) && !PyLong_CheckExact(item) &&
                !exact_json(item, depth + 1, limit))
                return 0;
            /* no Python code runs here, so the list cannot shrink under the loop */
        }
        return 1;
    }
    return PyUnicode_CheckExact(value) || PyLong_CheckExact(value) ||
           PyFloat_CheckExact(value) || PyBool_Check(value) || value == Py_None;
}

static PyObject *
fast_exact_json(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "exact_json() takes a value and a depth limit");
        return NULL;
    }
    if (!PyLong_CheckExact(args[1])) {
        PyErr_Format(PyExc_TypeError, "exact_json() needs an int limit, not %s",
                     type_name(args[1]));
        return NULL;
    }
    long limit = PyLong_AsLong(args[1]);
    if (limit == -1 && PyErr_Occurred())
        return NULL;
    if (limit < 0 || limit > 4096) {
        PyErr_SetString(PyExc_ValueError, "exact_json() needs 0 <= limit <= 4096");
        return NULL;
    }
    return PyBool_FromLong(exact_json(args[0], 0, (int)limit));
}

/* ---- frozen.thaw: a deep mutable copy of a frozen JSON value (D-501) -------------- */

#define THAW_DEPTH 200

/* The byte offset of the object slot ``_data`` of frozen (a __slots__ class), read from
 * its member descriptor in the type's own dict (no attribute lookup runs Python code);
 * -1 when frozen has no such slot. */
static Py_ssize_t
data_offset(PyTypeObject *frozen)
{
    PyObject *descr = PyDict_GetItemString(frozen->tp_dict, "_data");
    if (descr == NULL || !Py_IS_TYPE(descr, &PyMemberDescr_Type))
        return -1;
    PyMemberDef *member = ((PyMemberDescrObject *)descr)->d_member;
    if (member->type != T_OBJECT_EX && member->type != T_OBJECT)
        return -1;
    return member->offset;
}

/* Exact JSON scalars, shared by the copy as they are. */
#define THAW_LEAF(o) (PyUnicode_CheckExact(o) || PyLong_CheckExact(o) || \
                      PyFloat_CheckExact(o) || PyBool_Check(o) || (o) == Py_None)

/* The copy of value (a new reference); Py_NotImplemented (new reference) when value holds
 * a type other than exact dict, list, tuple, JSON scalars and frozen (whose ``_data`` is
 * an exact dict), or nests deeper than THAW_DEPTH: the caller then thaws it in Python. */
static PyObject *
thaw(PyObject *value, PyTypeObject *frozen, Py_ssize_t offset, int depth)
{
    if (THAW_LEAF(value))
        return Py_NewRef(value);
    if (depth >= THAW_DEPTH)
        return Py_NewRef(Py_NotImplemented);
    PyObject *source = NULL;
    if (PyDict_CheckExact(value))
        source = value;
    else if (Py_TYPE(value) == frozen && offset >= 0) {
        source = *(PyObject **)((char *)value + offset);
        if (source == NULL || !PyDict_CheckExact(source))
            return Py_NewRef(Py_NotImplemented);
    }
    if (source != NULL) {
        /* copy the table at once (its scalars shared), then replace each container in
         * place: replacing a value inserts nothing, so the walk stays valid */
        PyObject *out = PyDict_Copy(source);
        if (out == NULL)
            return NULL;
        Py_ssize_t pos = 0;
        PyObject *key, *item;
        while (PyDict_Next(out, &pos, &key, &item)) {
            /* only an exact str's hash and equality are known to run no Python code */
            if (!PyUnicode_CheckExact(key)) {
                Py_DECREF(out);
                return Py_NewRef(Py_NotImplemented);
            }
            if (THAW_LEAF(item))
                continue;
            PyObject *copy = thaw(item, frozen, offset, depth + 1);
            if (copy == NULL || copy == Py_NotImplemented) {
                Py_DECREF(out);
                return copy;
            }
            int failed = PyDict_SetItem(out, key, copy);
            Py_DECREF(copy);
            if (failed) {
                Py_DECREF(out);
                return NULL;
            }
        }
        return out;
    }
    if (PyList_CheckExact(value) || PyTuple_CheckExact(value)) {
        Py_ssize_t n = PySequence_Fast_GET_SIZE(value);
        PyObject *out = PyList_New(n);
        if (out == NULL)
            return NULL;
        for (Py_ssize_t i = 0; i < n; i++) {
            /* no Python code runs here, so the source cannot change size under the loop */
            PyObject *copy = thaw(PySequence_Fast_GET_ITEM(value, i), frozen, offset, depth + 1);
            if (copy == NULL || copy == Py_NotImplemented) {
                Py_DECREF(out);
                return copy;
            }
            PyList_SET_ITEM(out, i, copy);
        }
        return out;
    }
    return Py_NewRef(Py_NotImplemented);
}

static PyObject *
fast_thaw(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyType_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "thaw() takes a value and the frozen mapping type");
        return NULL;
    }
    PyTypeObject *frozen = (PyTypeObject *)args[1];
    return thaw(args[0], frozen, data_offset(frozen), 0);
}

/* ---- projection's one pass over a snapshot's events (snapshot._plain_projection) ---- */

/* The names the pass reads, interned at module init. */
static PyObject *K_TYPE, *K_SEQ, *K_TIME, *K_DATA, *K_SURFACE_OP, *V_APPEND, *T_ASSISTANT,
    *T_USER, *T_STEERING, *K_INTERRUPTED, *K_SOURCE, *K_KIND, *V_USER, *K_ENVELOPE,
    *K_CONTENT, *K_TEXT, *R_ASSISTANT;

#define MAX_SAFE_INTEGER 9007199254740991LL

/* 1 when o is an exact str equal to the interned name; never an error (exact strs only). */
static int
is_name(PyObject *o, PyObject *name)
{
    return o != NULL && PyUnicode_CheckExact(o) &&
           (o == name || PyUnicode_Compare(o, name) == 0);
}

/* 1 when o is an exact int with 0 <= o <= 2**53 - 1. */
static int
is_safe_index(PyObject *o)
{
    if (!PyLong_CheckExact(o))
        return 0;
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (v == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    return !overflow && v >= 0 && v <= MAX_SAFE_INTEGER;
}

/* 1 when every key of the exact dict d is an exact str: only then is a lookup in d known
 * to run no Python code (a key's own __eq__ is never called). */
static int
str_keys(PyObject *d)
{
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(d, &pos, &key, &value))
        if (!PyUnicode_CheckExact(key))
            return 0;
    return 1;
}

/* d[key] for an exact dict of exact-str keys (borrowed, NULL when absent). */
static PyObject *
get(PyObject *d, PyObject *key)
{
    PyObject *v = PyDict_GetItemWithError(d, key);
    if (v == NULL)
        PyErr_Clear(); /* str keys: absent, never an error */
    return v;
}

/* The (role, text, length) tuple of _one_text_block's shape, a new reference; NULL with
 * no error set when the message is of another shape (the caller keeps (type, data)),
 * NULL with an error set on a memory error. */
static PyObject *
one_text_block(PyObject *data, int assistant)
{
    if (!str_keys(data))
        return NULL;
    PyObject *role = assistant ? R_ASSISTANT : V_USER;
    if (assistant) {
        if (get(data, K_INTERRUPTED) == Py_True)
            return NULL;
    }
    else {
        PyObject *source = get(data, K_SOURCE);
        if (source == NULL || !PyDict_CheckExact(source) || !str_keys(source) ||
            !is_name(get(source, K_KIND), V_USER) || get(data, K_ENVELOPE) != NULL)
            return NULL;
    }
    PyObject *blocks = get(data, K_CONTENT);
    if (blocks == NULL || !PyList_CheckExact(blocks) || PyList_GET_SIZE(blocks) != 1)
        return NULL;
    PyObject *block = PyList_GET_ITEM(blocks, 0);
    if (!PyDict_CheckExact(block) || !str_keys(block) || !is_name(get(block, K_TYPE), K_TEXT))
        return NULL;
    PyObject *text = get(block, K_TEXT);
    if (text == NULL || !PyUnicode_CheckExact(text))
        return NULL;
    ENSURE_READY(text);
    if (PyUnicode_GET_LENGTH(text) == 0)
        return NULL;
    if (!PyUnicode_IS_ASCII(text) && surrogate_state(text) != 0)
        return NULL; /* a surrogate: projection's own reading (canonical, its length) */
    PyObject *length = PyLong_FromSsize_t(length_if_no_pair(text));
    if (length == NULL)
        return NULL;
    PyObject *out = PyTuple_Pack(3, role, text, length);
    Py_DECREF(length);
    return out;
}

static PyObject *
fast_plain_projection(PyObject *module, PyObject *events)
{
    if (!PyList_CheckExact(events) && !PyTuple_CheckExact(events))
        Py_RETURN_NONE;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(events);
    PyObject **items = PySequence_Fast_ITEMS(events);
    PyObject *out = PyList_New(0);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *raw = items[i];
        if (!PyDict_CheckExact(raw))
            goto other;
        Py_ssize_t size = PyDict_GET_SIZE(raw);
        if (size != 4 && size != 5)
            goto other;
        PyObject *type = NULL, *seq = NULL, *time = NULL, *data = NULL, *op = NULL;
        Py_ssize_t pos = 0;
        PyObject *key, *value;
        while (PyDict_Next(raw, &pos, &key, &value)) {
            if (!PyUnicode_CheckExact(key))
                goto other;
            if (is_name(key, K_TYPE))
                type = value;
            else if (is_name(key, K_SEQ))
                seq = value;
            else if (is_name(key, K_TIME))
                time = value;
            else if (is_name(key, K_DATA))
                data = value;
            else if (size == 5 && is_name(key, K_SURFACE_OP))
                op = value;
            else
                goto other;
        }
        if (type == NULL || seq == NULL || time == NULL || data == NULL)
            goto other;
        if (size == 5 && !is_name(op, V_APPEND))
            goto other;
        if (!PyUnicode_CheckExact(type) || !is_safe_index(seq) || !is_safe_index(time))
            goto other;
        int assistant = is_name(type, T_ASSISTANT);
        if (!assistant && !is_name(type, T_USER) && !is_name(type, T_STEERING))
            continue; /* never projected */
        if (!PyDict_CheckExact(data))
            goto other;
        PyObject *entry = one_text_block(data, assistant);
        if (entry == NULL) {
            if (PyErr_Occurred()) {
                Py_DECREF(out);
                return NULL;
            }
            entry = PyTuple_Pack(2, type, data);
            if (entry == NULL) {
                Py_DECREF(out);
                return NULL;
            }
        }
        int failed = PyList_Append(out, entry);
        Py_DECREF(entry);
        if (failed) {
            Py_DECREF(out);
            return NULL;
        }
    }
    return out;
other: /* an event of another shape: the general path reads the whole snapshot */
    Py_DECREF(out);
    Py_RETURN_NONE;
}

/* ---- module ------------------------------------------------------------------------ */

static PyMethodDef methods[] = {
    {"surrogates", fast_surrogates, METH_O,
     "0: no surrogate; 1: lone surrogates only; 2: a high surrogate followed by a low one."},
    {"find", (PyCFunction)(void (*)(void))fast_find, METH_FASTCALL,
     "text.find(needle, start, end) for 0 <= start, end; vectorised for needles of 2+."},
    {"plain", fast_plain, METH_O,
     "Whether orjson spells value exactly as JSON.stringify does (jsstr._plain)."},
    {"exact_json", (PyCFunction)(void (*)(void))fast_exact_json, METH_FASTCALL,
     "Whether value holds only exact JSON types, nested at most limit deep (compiled.plain_json)."},
    {"thaw", (PyCFunction)(void (*)(void))fast_thaw, METH_FASTCALL,
     "frozen.thaw(value), or NotImplemented when value holds another type (D-501)."},
    {"utf8_length", fast_utf8_length, METH_O, "Node Buffer.byteLength(s, 'utf8')."},
    {"canonical_length", fast_canonical_length, METH_O,
     "utf8_length(s) if s holds no surrogate pair as two code points, else -1."},
    {"plain_projection", fast_plain_projection, METH_O,
     "What snapshot._plain_projection returns for events (projection's one pass)."},
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
    struct {
        PyObject **slot;
        const char *text;
    } names[] = {
        {&K_TYPE, "type"}, {&K_SEQ, "seq"}, {&K_TIME, "time"}, {&K_DATA, "data"},
        {&K_SURFACE_OP, "surfaceOp"}, {&V_APPEND, "append"},
        {&T_ASSISTANT, "assistant/message"}, {&T_USER, "user/message"},
        {&T_STEERING, "steering/message"}, {&K_INTERRUPTED, "interrupted"},
        {&K_SOURCE, "source"}, {&K_KIND, "kind"}, {&V_USER, "user"},
        {&K_ENVELOPE, "envelope"}, {&K_CONTENT, "content"}, {&K_TEXT, "text"},
        {&R_ASSISTANT, "assistant"},
    };
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        if (*names[k].slot == NULL) {
            *names[k].slot = PyUnicode_InternFromString(names[k].text);
            if (*names[k].slot == NULL)
                return NULL;
        }
    }
    return PyModule_Create(&module_def);
}
