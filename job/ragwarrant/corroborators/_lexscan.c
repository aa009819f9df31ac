/* _lexscan: the native scanner of ragwarrant's lexical groundedness scores.
 *
 * The reference is the pure-Python scorer in lexical.py (and bench/lexical_reference.py, the
 * regex-per-sentence definition). This module reproduces its tokens and counts exactly:
 *
 * - token: on the lowercased text (str.lower(); computed here byte by byte for ASCII text), at
 *   each position the first alternative of
 *       \d{1,3}(?:,\d{3})+(?:\.\d+)?  |  \d+(?::\d+)+  |  \d+(?:\.\d+)+  |  [^\W_]+
 *   that matches, scanned left to right as re.findall does; \d is Py_UNICODE_ISDECIMAL and
 *   [^\W_] is Py_UNICODE_ISALNUM, as in CPython's sre for str patterns. A number with separators
 *   is written in lexical.number_form's canonical form.
 * - sentence: a break at whitespace (Py_UNICODE_ISSPACE) after [.!?], or after [.!?] and one
 *   closer ["'\u201d\u2019)\]], consuming the whitespace run; else at a run of "\n". Blank pieces
 *   are no sentence.
 * - context CamelCase parts: the ASCII-letter prefix of a word-character run (ISALNUM or "_") of
 *   the original text, when it holds [a-z][A-Z], cut at (?<=[a-z])(?=[A-Z]) and
 *   (?<=[A-Z])(?=[A-Z][a-z]) and lowered.
 *
 * Where it cannot promise the reference's behaviour (a time field longer than 640 digits, where
 * int() may refuse the conversion), a scoring method returns None and the caller uses the
 * Python scorer.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__)
#define LEX_INLINE static inline __attribute__((always_inline))
#else
#define LEX_INLINE static inline
#endif

/* int(str) accepts at least this many digits whatever sys.set_int_max_str_digits says */
#define SAFE_INT_DIGITS 640

enum { C_SPACE = 1, C_ALNUM = 2, C_DECIMAL = 4, C_WORD = 8, C_LOWER = 16, C_UPPER = 32 };
static unsigned char ascii_class[128];
static unsigned char ascii_lower[128];

/* ------------------------------------------------------------------ growable buffers */

typedef struct {
    char *data;
    Py_ssize_t len, cap;
} Buf;

static int
buf_reserve(Buf *b, Py_ssize_t extra)
{
    if (b->len + extra <= b->cap) {
        return 0;
    }
    Py_ssize_t cap = b->cap ? b->cap : 1024;
    while (cap < b->len + extra) {
        cap *= 2;
    }
    char *data = PyMem_Realloc(b->data, (size_t)cap);
    if (data == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->data = data;
    b->cap = cap;
    return 0;
}

typedef struct {
    Py_ssize_t off, len, sentence;
} Tok;

typedef struct {
    Buf bytes;      /* the tokens' UTF-8, one after another */
    Tok *toks;
    Py_ssize_t n, cap;
    Py_ssize_t n_sentences;
    int fallback;   /* set when the Python scorer must decide */
} Tokens;

static void
tokens_free(Tokens *t)
{
    PyMem_Free(t->bytes.data);
    PyMem_Free(t->toks);
    memset(t, 0, sizeof(*t));
}

static int
tokens_push(Tokens *t, Py_ssize_t off, Py_ssize_t sentence)
{
    if (t->n == t->cap) {
        Py_ssize_t cap = t->cap ? 2 * t->cap : 256;
        Tok *toks = PyMem_Realloc(t->toks, (size_t)cap * sizeof(Tok));
        if (toks == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        t->toks = toks;
        t->cap = cap;
    }
    t->toks[t->n].off = off;
    t->toks[t->n].len = t->bytes.len - off;
    t->toks[t->n].sentence = sentence;
    t->n++;
    return 0;
}

/* ------------------------------------------------------------------ token set (open addressing) */

typedef struct {
    uint64_t hash;
    Py_ssize_t tok; /* index into the Tokens, -1 when empty */
} Slot;

typedef struct {
    const Tokens *src;
    Slot *slots;
    size_t mask;
} TokSet;

static uint64_t
hash_bytes(const char *s, Py_ssize_t n)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a, 64 bit */
    for (Py_ssize_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

static int
set_init(TokSet *set, const Tokens *src)
{
    size_t cap = 64;
    while (cap < 2 * (size_t)src->n + 16) {
        cap *= 2;
    }
    set->src = src;
    set->mask = cap - 1;
    set->slots = PyMem_Malloc(cap * sizeof(Slot));
    if (set->slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i < cap; i++) {
        set->slots[i].tok = -1;
    }
    for (Py_ssize_t k = 0; k < src->n; k++) {
        const char *s = src->bytes.data + src->toks[k].off;
        Py_ssize_t n = src->toks[k].len;
        uint64_t h = hash_bytes(s, n);
        size_t i = (size_t)h & set->mask;
        for (;;) {
            Slot *slot = &set->slots[i];
            if (slot->tok < 0) {
                slot->hash = h;
                slot->tok = k;
                break;
            }
            const Tok *o = &src->toks[slot->tok];
            if (slot->hash == h && o->len == n && memcmp(src->bytes.data + o->off, s, n) == 0) {
                break;
            }
            i = (i + 1) & set->mask;
        }
    }
    return 0;
}

static int
set_contains(const TokSet *set, const char *s, Py_ssize_t n)
{
    uint64_t h = hash_bytes(s, n);
    size_t i = (size_t)h & set->mask;
    for (;;) {
        const Slot *slot = &set->slots[i];
        if (slot->tok < 0) {
            return 0;
        }
        const Tok *o = &set->src->toks[slot->tok];
        if (slot->hash == h && o->len == n &&
            memcmp(set->src->bytes.data + o->off, s, n) == 0) {
            return 1;
        }
        i = (i + 1) & set->mask;
    }
}

/* ------------------------------------------------------------------ character classes */

LEX_INLINE int
is_alnum(Py_UCS4 c)
{
    return c < 128 ? (ascii_class[c] & C_ALNUM) != 0 : Py_UNICODE_ISALNUM(c);
}

LEX_INLINE int
is_decimal(Py_UCS4 c)
{
    return c < 128 ? (ascii_class[c] & C_DECIMAL) != 0 : Py_UNICODE_ISDECIMAL(c);
}

LEX_INLINE int
is_space(Py_UCS4 c)
{
    return c < 128 ? (ascii_class[c] & C_SPACE) != 0 : Py_UNICODE_ISSPACE(c);
}

LEX_INLINE int
is_word(Py_UCS4 c)
{
    return c < 128 ? (ascii_class[c] & C_WORD) != 0 : Py_UNICODE_ISALNUM(c);
}

LEX_INLINE int
is_end_mark(Py_UCS4 c)
{
    return c == '.' || c == '!' || c == '?';
}

LEX_INLINE int
is_closer(Py_UCS4 c)
{
    return c == '"' || c == '\'' || c == 0x201d || c == 0x2019 || c == ')' || c == ']';
}

LEX_INLINE int
is_ascii_lower(Py_UCS4 c)
{
    return c < 128 && (ascii_class[c] & C_LOWER);
}

LEX_INLINE int
is_ascii_upper(Py_UCS4 c)
{
    return c < 128 && (ascii_class[c] & C_UPPER);
}

/* A text as the scanner reads it: code points of one PEP 393 kind, lowered on the fly when
 * `lower` (ASCII text only; other text is lowered by str.lower() before). */
typedef struct {
    int kind;
    const void *data;
    Py_ssize_t n;
    int lower;
} Text;

LEX_INLINE Py_UCS4
rd(const Text *t, Py_ssize_t i)
{
    Py_UCS4 c = PyUnicode_READ(t->kind, t->data, i);
    return t->lower ? ascii_lower[c] : c;
}

/* c as UTF-8 at o (room for 4 bytes); returns the end. Surrogates are never token characters. */
LEX_INLINE char *
utf8_at(char *o, Py_UCS4 c)
{
    if (c < 0x80) {
        *o++ = (char)c;
    }
    else if (c < 0x800) {
        *o++ = (char)(0xc0 | (c >> 6));
        *o++ = (char)(0x80 | (c & 0x3f));
    }
    else if (c < 0x10000) {
        *o++ = (char)(0xe0 | (c >> 12));
        *o++ = (char)(0x80 | ((c >> 6) & 0x3f));
        *o++ = (char)(0x80 | (c & 0x3f));
    }
    else {
        *o++ = (char)(0xf0 | (c >> 18));
        *o++ = (char)(0x80 | ((c >> 12) & 0x3f));
        *o++ = (char)(0x80 | ((c >> 6) & 0x3f));
        *o++ = (char)(0x80 | (c & 0x3f));
    }
    return o;
}

/* ------------------------------------------------------------------ numbers with separators */

LEX_INLINE Py_ssize_t
decimal_run_end(const Text *t, Py_ssize_t i)
{
    while (i < t->n && is_decimal(rd(t, i))) {
        i++;
    }
    return i;
}

/* End of (sep \d+)+ from x, or -1 when not even one repetition matches. */
static Py_ssize_t
separated_end(const Text *t, Py_ssize_t x, Py_UCS4 sep)
{
    Py_ssize_t y = x;
    while (y + 1 < t->n && rd(t, y) == sep && is_decimal(rd(t, y + 1))) {
        y = decimal_run_end(t, y + 2);
    }
    return y > x ? y : -1;
}

/* End of the number with separators starting at p (a decimal digit), or -1 when none does. */
static Py_ssize_t
number_end(const Text *t, Py_ssize_t p)
{
    Py_ssize_t x = decimal_run_end(t, p);
    if (x - p <= 3) { /* \d{1,3}(?:,\d{3})+(?:\.\d+)? */
        Py_ssize_t y = x;
        while (y + 3 < t->n && rd(t, y) == ',' && is_decimal(rd(t, y + 1)) &&
               is_decimal(rd(t, y + 2)) && is_decimal(rd(t, y + 3))) {
            y += 4;
        }
        if (y > x) {
            if (y + 1 < t->n && rd(t, y) == '.' && is_decimal(rd(t, y + 1))) {
                y = decimal_run_end(t, y + 2);
            }
            return y;
        }
    }
    Py_ssize_t y = separated_end(t, x, ':');
    return y >= 0 ? y : separated_end(t, x, '.');
}

LEX_INLINE int
decimal_value(Py_UCS4 c)
{
    return c < 128 ? (int)(c - '0') : Py_UNICODE_TODECIMAL(c);
}

/* str(int(field)) (head) or f"{int(field):02d}": ASCII digits, leading zeros dropped. */
static void
put_time_field(Buf *b, const Text *t, Py_ssize_t from, Py_ssize_t to, int head, int *fallback)
{
    if (to - from > SAFE_INT_DIGITS) {
        *fallback = 1;
    }
    while (from < to && decimal_value(rd(t, from)) == 0) {
        from++;
    }
    Py_ssize_t width = to - from, pad = head ? 1 : 2;
    for (; width < pad; width++) {
        b->data[b->len++] = '0';
    }
    for (; from < to; from++) {
        b->data[b->len++] = (char)('0' + decimal_value(rd(t, from)));
    }
}

/* lexical.number_form of the token t[p:end], appended to b as UTF-8. */
static void
put_number_form(Buf *b, const Text *t, Py_ssize_t p, Py_ssize_t end, int *fallback)
{
    Py_ssize_t dot = -1, dots = 0, colon = 0;
    for (Py_ssize_t i = p; i < end; i++) {
        colon |= rd(t, i) == ':';
    }
    if (colon) {
        Py_ssize_t from = p;
        for (Py_ssize_t i = p; i <= end; i++) {
            if (i == end || rd(t, i) == ':') {
                if (from > p) {
                    b->data[b->len++] = ':';
                }
                put_time_field(b, t, from, i, from == p, fallback);
                from = i + 1;
            }
        }
        return;
    }
    for (Py_ssize_t i = p; i < end; i++) {
        Py_UCS4 c = rd(t, i);
        if (c == '.') {
            dots++;
            dot = b->len;
        }
        if (c != ',') {
            b->len = utf8_at(b->data + b->len, c) - b->data;
        }
    }
    if (dots == 1) { /* trailing ASCII zeros of the fraction dropped, then a bare dot */
        while (b->len > dot + 1 && b->data[b->len - 1] == '0') {
            b->len--;
        }
        if (b->len == dot + 1) {
            b->len--;
        }
    }
}

/* ------------------------------------------------------------------ the scan */

/* The token starting at p (an alphanumeric character): appended to out; returns its end. */
LEX_INLINE Py_ssize_t
scan_token(const Text *t, Py_ssize_t p, Py_ssize_t sentence, Tokens *out)
{
    Py_ssize_t off = out->bytes.len, end = -1;
    if (is_decimal(rd(t, p))) {
        end = number_end(t, p);
    }
    if (end > 0) {
        /* the colon form: each field grows by at most one digit */
        if (buf_reserve(&out->bytes, 4 * (end - p) + 8) < 0) {
            return -1;
        }
        put_number_form(&out->bytes, t, p, end, &out->fallback);
    }
    else {
        end = p + 1;
        while (end < t->n && is_alnum(rd(t, end))) {
            end++;
        }
        if (buf_reserve(&out->bytes, 4 * (end - p)) < 0) {
            return -1;
        }
        char *o = out->bytes.data + out->bytes.len;
        for (Py_ssize_t i = p; i < end; i++) {
            o = utf8_at(o, rd(t, i));
        }
        out->bytes.len = o - out->bytes.data;
    }
    return tokens_push(out, off, sentence) < 0 ? -1 : end;
}

/* Length of the sentence break at p (whitespace), 0 when none starts there. */
LEX_INLINE Py_ssize_t
break_length(const Text *t, Py_ssize_t p)
{
    int after_end = (p >= 1 && is_end_mark(rd(t, p - 1))) ||
                    (p >= 2 && is_end_mark(rd(t, p - 2)) && is_closer(rd(t, p - 1)));
    Py_ssize_t q = p;
    if (after_end) {
        while (q < t->n && is_space(rd(t, q))) {
            q++;
        }
    }
    else {
        while (q < t->n && rd(t, q) == '\n') {
            q++;
        }
    }
    return q - p;
}

LEX_INLINE int
scan_impl(const Text *t, int sentences, Tokens *out)
{
    Py_ssize_t p = 0, sentence = 0;
    int nonblank = 0;
    while (p < t->n) {
        Py_UCS4 c = rd(t, p);
        if (is_alnum(c)) {
            p = scan_token(t, p, sentence, out);
            if (p < 0) {
                return -1;
            }
            nonblank = 1;
            continue;
        }
        if (!is_space(c)) {
            nonblank = 1;
        }
        else if (sentences) {
            Py_ssize_t skip = break_length(t, p);
            if (skip > 0) {
                sentence += nonblank;
                nonblank = 0;
                p += skip;
                continue;
            }
        }
        p++;
    }
    out->n_sentences = sentence + nonblank;
    return 0;
}

/* One instance per string kind (and ASCII lowering), so that PyUnicode_READ's switch folds away. */
#define LEX_INSTANCE(name, impl, kind, lower)                                                  \
    static int name(const Text *t, int sentences, Tokens *out)                                 \
    {                                                                                          \
        Text u = {kind, t->data, t->n, lower};                                                 \
        return impl(&u, sentences, out);                                                       \
    }

LEX_INSTANCE(scan_ascii, scan_impl, PyUnicode_1BYTE_KIND, 1)
LEX_INSTANCE(scan_1, scan_impl, PyUnicode_1BYTE_KIND, 0)
LEX_INSTANCE(scan_2, scan_impl, PyUnicode_2BYTE_KIND, 0)
LEX_INSTANCE(scan_4, scan_impl, PyUnicode_4BYTE_KIND, 0)

static int
scan_text(PyObject *lowered, int ascii, int sentences, Tokens *out)
{
    Text t = {PyUnicode_KIND(lowered), PyUnicode_DATA(lowered), PyUnicode_GET_LENGTH(lowered), 0};
    if (ascii) {
        return scan_ascii(&t, sentences, out);
    }
    switch (t.kind) {
    case PyUnicode_1BYTE_KIND:
        return scan_1(&t, sentences, out);
    case PyUnicode_2BYTE_KIND:
        return scan_2(&t, sentences, out);
    default:
        return scan_4(&t, sentences, out);
    }
}

/* The tokens of str `text` (lowered: by the scan for ASCII text, else by str.lower()). */
static int
scan_str(PyObject *text, int sentences, Tokens *out)
{
    if (PyUnicode_IS_ASCII(text)) {
        return scan_text(text, 1, sentences, out);
    }
    PyObject *lowered = PyObject_CallMethod(text, "lower", NULL);
    if (lowered == NULL) {
        return -1;
    }
    if (!PyUnicode_Check(lowered)) {
        Py_DECREF(lowered);
        PyErr_SetString(PyExc_TypeError, "str.lower() returned a non-str");
        return -1;
    }
    int rc = scan_text(lowered, 0, sentences, out);
    Py_DECREF(lowered);
    return rc;
}

/* ------------------------------------------------------------------ CamelCase parts */

static int
put_camel_parts(const Text *t, Py_ssize_t p, Py_ssize_t q, Tokens *out)
{
    if (buf_reserve(&out->bytes, 2 * (q - p)) < 0) {
        return -1;
    }
    Py_ssize_t off = out->bytes.len;
    for (Py_ssize_t i = p; i < q; i++) {
        Py_UCS4 c = rd(t, i);
        if (i > p) {
            Py_UCS4 prev = rd(t, i - 1);
            int cut = (is_ascii_lower(prev) && is_ascii_upper(c)) ||
                      (is_ascii_upper(prev) && is_ascii_upper(c) && i + 1 < q &&
                       is_ascii_lower(rd(t, i + 1)));
            if (cut) {
                if (tokens_push(out, off, 0) < 0) {
                    return -1;
                }
                off = out->bytes.len;
            }
        }
        out->bytes.data[out->bytes.len++] = (char)ascii_lower[c];
    }
    return tokens_push(out, off, 0);
}

LEX_INLINE int
camel_impl(const Text *t, int unused, Tokens *out)
{
    (void)unused;
    Py_ssize_t p = 0;
    while (p < t->n) {
        if (!is_word(rd(t, p))) {
            p++;
            continue;
        }
        Py_ssize_t q = p;
        int camel = 0;
        while (q < t->n && (is_ascii_lower(rd(t, q)) || is_ascii_upper(rd(t, q)))) {
            camel |= q > p && is_ascii_lower(rd(t, q - 1)) && is_ascii_upper(rd(t, q));
            q++;
        }
        if (camel && put_camel_parts(t, p, q, out) < 0) {
            return -1;
        }
        while (q < t->n && is_word(rd(t, q))) {
            q++;
        }
        p = q;
    }
    return 0;
}

LEX_INSTANCE(camel_1, camel_impl, PyUnicode_1BYTE_KIND, 0)
LEX_INSTANCE(camel_2, camel_impl, PyUnicode_2BYTE_KIND, 0)
LEX_INSTANCE(camel_4, camel_impl, PyUnicode_4BYTE_KIND, 0)

/* Whether the text holds [a-z][A-Z] anywhere (a CamelCase word needs it): a quick test. */
#define LEX_CASE_BOUNDARY(type)                                                                \
    {                                                                                          \
        const type *s = t->data;                                                               \
        for (Py_ssize_t i = 0; i + 1 < t->n; i++) {                                            \
            if ((Py_UCS4)(s[i + 1] - 'A') < 26 && (Py_UCS4)(s[i] - 'a') < 26) {                \
                return 1;                                                                      \
            }                                                                                  \
        }                                                                                      \
        return 0;                                                                              \
    }

static int
has_case_boundary(const Text *t)
{
    switch (t->kind) {
    case PyUnicode_1BYTE_KIND:
        LEX_CASE_BOUNDARY(Py_UCS1)
    case PyUnicode_2BYTE_KIND:
        LEX_CASE_BOUNDARY(Py_UCS2)
    default:
        LEX_CASE_BOUNDARY(Py_UCS4)
    }
}

/* Every token of a context text, CamelCase parts included, with repeats. */
static int
context_tokens(PyObject *text, Tokens *out)
{
    if (scan_str(text, 0, out) < 0) {
        return -1;
    }
    Text t = {PyUnicode_KIND(text), PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text), 0};
    if (!has_case_boundary(&t)) {
        return 0;
    }
    switch (t.kind) {
    case PyUnicode_1BYTE_KIND:
        return camel_1(&t, 0, out);
    case PyUnicode_2BYTE_KIND:
        return camel_2(&t, 0, out);
    default:
        return camel_4(&t, 0, out);
    }
}

/* ------------------------------------------------------------------ the Scanner type */

typedef struct {
    PyObject_HEAD
    Tokens stop_tokens;
    TokSet stop;
    Py_ssize_t min_content;
} Scanner;

typedef struct {
    Py_ssize_t n_content, n_unsupported, n_numeric, n_numeric_missing, n_scored;
    double weakest;
} Counts;

static int
require_str(PyObject *obj, const char *what)
{
    if (!PyUnicode_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be str, not %.100s", what, Py_TYPE(obj)->tp_name);
        return -1;
    }
    return 0;
}

static int
has_ascii_digit(const char *s, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        if (s[i] >= '0' && s[i] <= '9') {
            return 1;
        }
    }
    return 0;
}

/* Membership of token k of `r` in the context: the native set, or a Python set of str. */
static int
is_known(const Tokens *r, Py_ssize_t k, const TokSet *known, PyObject *known_py)
{
    const char *s = r->bytes.data + r->toks[k].off;
    Py_ssize_t n = r->toks[k].len;
    if (known != NULL) {
        return set_contains(known, s, n);
    }
    PyObject *token = PyUnicode_DecodeUTF8(s, n, NULL);
    if (token == NULL) {
        return -1;
    }
    int found = PySet_Contains(known_py, token);
    Py_DECREF(token);
    return found;
}

static void
close_sentence(const Scanner *self, Py_ssize_t content, Py_ssize_t unsupported, Counts *c)
{
    if (content >= self->min_content) {
        double share = (double)unsupported / (double)content;
        c->n_scored++;
        if (share > c->weakest) {
            c->weakest = share;
        }
    }
}

static int
count_response(const Scanner *self, const Tokens *r, const TokSet *known, PyObject *known_py,
               Counts *c)
{
    Py_ssize_t s_content = 0, s_unsupported = 0, sentence = 0;
    memset(c, 0, sizeof(*c));
    for (Py_ssize_t k = 0; k < r->n; k++) {
        const Tok *tok = &r->toks[k];
        if (tok->sentence != sentence) {
            close_sentence(self, s_content, s_unsupported, c);
            s_content = s_unsupported = 0;
            sentence = tok->sentence;
        }
        const char *s = r->bytes.data + tok->off;
        int numeric = has_ascii_digit(s, tok->len);
        int stop = set_contains(&self->stop, s, tok->len);
        if (stop && !numeric) {
            continue;
        }
        int found = is_known(r, k, known, known_py);
        if (found < 0) {
            return -1;
        }
        if (!stop) {
            s_content++;
            s_unsupported += !found;
            c->n_content++;
            c->n_unsupported += !found;
        }
        if (numeric) {
            c->n_numeric++;
            c->n_numeric_missing += !found;
        }
    }
    close_sentence(self, s_content, s_unsupported, c);
    return 0;
}

/* Counts of `response` against a context given as text (known_py NULL) or as a set of str. */
static PyObject *
score_impl(Scanner *self, PyObject *response, PyObject *context_text, PyObject *known_py)
{
    Tokens ctx = {0}, resp = {0};
    TokSet known = {0};
    Counts c;
    PyObject *result = NULL;
    if (context_text != NULL &&
        (context_tokens(context_text, &ctx) < 0 || set_init(&known, &ctx) < 0)) {
        goto done;
    }
    if (scan_str(response, 1, &resp) < 0) {
        goto done;
    }
    if (ctx.fallback || resp.fallback) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    if (count_response(self, &resp, context_text ? &known : NULL, known_py, &c) < 0) {
        goto done;
    }
    result = Py_BuildValue("nnnnndn", c.n_content, c.n_unsupported, c.n_numeric,
                           c.n_numeric_missing, c.n_scored, c.weakest, resp.n_sentences);
done:
    PyMem_Free(known.slots);
    tokens_free(&ctx);
    tokens_free(&resp);
    return result;
}

static PyObject *
Scanner_score(Scanner *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "score() takes (response, context)");
        return NULL;
    }
    if (require_str(args[0], "response") < 0 || require_str(args[1], "context") < 0) {
        return NULL;
    }
    return score_impl(self, args[0], args[1], NULL);
}

static PyObject *
Scanner_score_known(Scanner *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "score_known() takes (response, known)");
        return NULL;
    }
    if (require_str(args[0], "response") < 0) {
        return NULL;
    }
    if (!PyAnySet_Check(args[1])) {
        PyErr_Format(PyExc_TypeError, "known must be a set or frozenset, not %.100s",
                     Py_TYPE(args[1])->tp_name);
        return NULL;
    }
    return score_impl(self, args[0], NULL, args[1]);
}

static PyObject *
token_str(const Tokens *t, Py_ssize_t k)
{
    return PyUnicode_DecodeUTF8(t->bytes.data + t->toks[k].off, t->toks[k].len, NULL);
}

static PyObject *
Scanner_tokens(Scanner *self, PyObject *text)
{
    (void)self;
    Tokens t = {0};
    PyObject *list = NULL;
    if (require_str(text, "text") < 0 || scan_str(text, 0, &t) < 0) {
        goto done;
    }
    if (t.fallback) {
        list = Py_NewRef(Py_None);
        goto done;
    }
    list = PyList_New(t.n);
    for (Py_ssize_t k = 0; list != NULL && k < t.n; k++) {
        PyObject *token = token_str(&t, k);
        if (token == NULL) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, k, token);
    }
done:
    tokens_free(&t);
    return list;
}

static PyObject *
Scanner_context_tokens(Scanner *self, PyObject *text)
{
    (void)self;
    Tokens t = {0};
    TokSet set = {0};
    PyObject *result = NULL;
    if (require_str(text, "context") < 0 || context_tokens(text, &t) < 0) {
        goto done;
    }
    if (t.fallback) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    if (set_init(&set, &t) < 0 || (result = PyFrozenSet_New(NULL)) == NULL) {
        goto done;
    }
    for (size_t i = 0; i <= set.mask; i++) {
        if (set.slots[i].tok < 0) {
            continue;
        }
        PyObject *token = token_str(&t, set.slots[i].tok);
        if (token == NULL || PySet_Add(result, token) < 0) {
            Py_XDECREF(token);
            Py_CLEAR(result);
            break;
        }
        Py_DECREF(token);
    }
done:
    PyMem_Free(set.slots);
    tokens_free(&t);
    return result;
}

static int
Scanner_init(Scanner *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"stop_words", "min_sentence_content_tokens", NULL};
    PyObject *words, *iter, *word;
    Py_ssize_t min_content;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "On", kwlist, &words, &min_content)) {
        return -1;
    }
    if (self->stop.slots != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Scanner is already initialised");
        return -1;
    }
    if ((iter = PyObject_GetIter(words)) == NULL) {
        return -1;
    }
    while ((word = PyIter_Next(iter)) != NULL) {
        Py_ssize_t n = 0;
        const char *s =
            require_str(word, "a stop word") < 0 ? NULL : PyUnicode_AsUTF8AndSize(word, &n);
        if (s == NULL || buf_reserve(&self->stop_tokens.bytes, n) < 0) {
            Py_DECREF(word);
            break;
        }
        Py_ssize_t off = self->stop_tokens.bytes.len;
        memcpy(self->stop_tokens.bytes.data + off, s, (size_t)n);
        self->stop_tokens.bytes.len += n;
        Py_DECREF(word);
        if (tokens_push(&self->stop_tokens, off, 0) < 0) {
            break;
        }
    }
    Py_DECREF(iter);
    if (PyErr_Occurred() || set_init(&self->stop, &self->stop_tokens) < 0) {
        tokens_free(&self->stop_tokens);
        return -1;
    }
    self->min_content = min_content;
    return 0;
}

static void
Scanner_dealloc(Scanner *self)
{
    PyMem_Free(self->stop.slots);
    tokens_free(&self->stop_tokens);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef Scanner_methods[] = {
    {"score", (PyCFunction)(void (*)(void))Scanner_score, METH_FASTCALL,
     "score(response, context) -> (n_content, n_unsupported, n_numeric, n_numeric_missing, "
     "n_sentences_scored, weakest, n_sentences), or None for the Python scorer to decide.\n"
     "context is the passages joined by one space. Raises TypeError for non-str input."},
    {"score_known", (PyCFunction)(void (*)(void))Scanner_score_known, METH_FASTCALL,
     "score_known(response, known) -> as score(), against a set of context tokens (str)."},
    {"tokens", (PyCFunction)Scanner_tokens, METH_O,
     "tokens(text) -> list[str] of tokens in order (lexical.tokenize), or None."},
    {"context_tokens", (PyCFunction)Scanner_context_tokens, METH_O,
     "context_tokens(text) -> frozenset[str] of tokens and CamelCase parts, or None."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject ScannerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ragwarrant.corroborators._lexscan.Scanner",
    .tp_doc = "Scanner(stop_words, min_sentence_content_tokens): tokens and counts of lexical.py.",
    .tp_basicsize = sizeof(Scanner),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Scanner_init,
    .tp_dealloc = (destructor)Scanner_dealloc,
    .tp_methods = Scanner_methods,
};

static struct PyModuleDef lexscan_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "ragwarrant.corroborators._lexscan",
    .m_doc = "Native tokens and counts of ragwarrant.corroborators.lexical (same results).",
    .m_size = -1,
};

PyMODINIT_FUNC
PyInit__lexscan(void)
{
    for (Py_UCS4 c = 0; c < 128; c++) {
        ascii_class[c] = (unsigned char)((Py_UNICODE_ISSPACE(c) ? C_SPACE : 0) |
                                         (Py_UNICODE_ISALNUM(c) ? C_ALNUM : 0) |
                                         (Py_UNICODE_ISDECIMAL(c) ? C_DECIMAL : 0) |
                                         (Py_UNICODE_ISALNUM(c) || c == '_' ? C_WORD : 0) |
                                         (c >= 'a' && c <= 'z' ? C_LOWER : 0) |
                                         (c >= 'A' && c <= 'Z' ? C_UPPER : 0));
        ascii_lower[c] = (unsigned char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
    if (PyType_Ready(&ScannerType) < 0) {
        return NULL;
    }
    PyObject *m = PyModule_Create(&lexscan_module);
    if (m == NULL) {
        return NULL;
    }
    if (PyModule_AddObjectRef(m, "Scanner", (PyObject *)&ScannerType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
