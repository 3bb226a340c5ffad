// platform_file.c — checks a user's SimGrid platform file (dtsim --platform FILE.xml) before
// SimGrid sees it, and counts its hosts and cores: readable, well-formed enough (every tag
// closed, every element closed in order), a <platform> root, at least one host. SimGrid
// itself aborts on a bad file with a parser trace; this says which file and what is wrong.
// Not a validating XML parser: no DTD, no entities, attribute values are not unescaped.
//
// Counted: <host id=..> (core="k" cores, default 1), <cluster radical="0-3,8"> and
// <cabinet radical=..> (one host per radical number, core cores each), <peer> (one host).
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "platform.h"

#define MAX_DEPTH 64
#define MAX_FILE (256L << 20)
#define MAX_COUNT 0x7fffffffLL  // hosts or cores: they end up in an int

typedef struct {
    const char *path, *s, *end, *p;
    char stack[MAX_DEPTH][32];
    int depth, seen_root;
    long long hosts, cores;
    dt_error *err;
} scan;

static int line_of(const scan *sc, const char *at) {
    int line = 1;
    for (const char *q = sc->s; q < at && q < sc->end; q++) line += *q == '\n';
    return line;
}

static int bad(scan *sc, const char *at, const char *what) {
    return dt_fail(sc->err, DT_EXIT_USAGE, "platform file %.300s, line %d: %s", sc->path,
                   line_of(sc, at), what);
}

static int is_space(char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r'; }
static int is_name(char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '_' || ch == '-' || ch == '.' || ch == ':';
}

// Skips to just after `close`; -1 if the file ends first (truncated).
static int skip_past(scan *sc, const char *close) {
    size_t n = strlen(close);
    for (const char *q = sc->p; q + n <= sc->end; q++)
        if (memcmp(q, close, n) == 0) {
            sc->p = q + n;
            return 0;
        }
    return -1;
}

// Reads a name at sc->p into out (truncated to 31 characters); its length.
static int read_name(scan *sc, char out[32]) {
    int n = 0;
    while (sc->p < sc->end && is_name(*sc->p)) {
        if (n < 31) out[n] = *sc->p;
        n++, sc->p++;
    }
    out[n < 31 ? n : 31] = '\0';
    return n;
}

// The value of attribute `name` in the attribute text [a, b), copied to out; 0 if absent.
static int attr(const char *a, const char *b, const char *name, char *out, size_t size) {
    size_t n = strlen(name);
    for (const char *q = a; q + n < b; q++) {
        if ((q == a || is_space(q[-1])) && memcmp(q, name, n) == 0) {
            const char *v = q + n;
            while (v < b && is_space(*v)) v++;
            if (v >= b || *v != '=') continue;
            v++;
            while (v < b && is_space(*v)) v++;
            if (v >= b || (*v != '"' && *v != '\'')) continue;
            char quote = *v++;
            const char *e = memchr(v, quote, (size_t)(b - v));
            if (!e) return 0;
            snprintf(out, size, "%.*s", (int)(e - v), v);
            return 1;
        }
    }
    return 0;
}

// "0-3,8,10-11" -> 7; -1 if malformed or more than MAX_COUNT hosts.
static long long radical_count(const char *r) {
    long long total = 0;
    const char *p = r;
    while (*p) {
        char *e;
        long lo = strtol(p, &e, 10), hi = lo;
        if (e == p || lo < 0 || lo > MAX_COUNT) return -1;
        p = e;
        if (*p == '-') {
            hi = strtol(++p, &e, 10);
            if (e == p || hi < lo || hi > MAX_COUNT) return -1;
            p = e;
        }
        total += hi - lo + 1;
        if (total > MAX_COUNT) return -1;  // no platform declares 2^31 hosts
        if (*p == ',') p++;
        else if (*p) return -1;
    }
    return total > 0 ? total : -1;
}

// Counts the hosts an element declares. [a, b) is its attribute text.
static int count_hosts(scan *sc, const char *name, const char *a, const char *b, const char *at) {
    char v[256];
    long long cores = 1, n = 0;
    if (attr(a, b, "core", v, sizeof v)) {
        char *e;
        cores = strtoll(v, &e, 10);
        if (*v == '\0' || *e || cores < 1 || cores > MAX_COUNT)
            return bad(sc, at, "core= is not a positive count below 2^31");
    }
    if (strcmp(name, "host") == 0 || strcmp(name, "peer") == 0) {
        if (!attr(a, b, "id", v, sizeof v) || !v[0])
            return bad(sc, at, strcmp(name, "host") == 0 ? "<host> without an id"
                                                          : "<peer> without an id");
        n = 1;
    } else if (strcmp(name, "cluster") == 0 || strcmp(name, "cabinet") == 0) {
        if (!attr(a, b, "radical", v, sizeof v))
            return bad(sc, at, "<cluster>/<cabinet> without radical=\"first-last\"");
        n = radical_count(v);
        if (n < 0)
            return bad(sc, at, "radical= is not a list of numbers and ranges like 0-31 (fewer "
                               "than 2^31 hosts)");
    } else {
        return 0;
    }
    if (strcmp(name, "peer") == 0) cores = 1;
    sc->hosts += n;
    sc->cores += n * cores;  // each factor < 2^31: no overflow, and the sums stop below
    if (sc->hosts > MAX_COUNT || sc->cores > MAX_COUNT)
        return bad(sc, at, "more than 2^31 hosts or cores");
    return 0;
}

// A start or end tag at sc->p (just after '<').
static int tag(scan *sc, const char *at) {
    int closing = *sc->p == '/';
    if (closing) sc->p++;
    char name[32];
    if (read_name(sc, name) == 0) return bad(sc, at, "not XML: '<' not followed by a tag name");
    const char *a = sc->p;
    char quote = 0;
    while (sc->p < sc->end && (quote || *sc->p != '>')) {
        if (quote && *sc->p == quote) quote = 0;
        else if (!quote && (*sc->p == '"' || *sc->p == '\'')) quote = *sc->p;
        sc->p++;
    }
    if (sc->p >= sc->end) return bad(sc, at, "truncated: the file ends inside a tag");
    const char *b = sc->p++;  // b at '>'
    int empty = b > a && b[-1] == '/';
    if (closing) {
        if (sc->depth == 0 || strcmp(sc->stack[sc->depth - 1], name) != 0) {
            char msg[128];
            snprintf(msg, sizeof msg, "malformed XML: </%s> closes %s%s%s", name,
                     sc->depth ? "<" : "nothing", sc->depth ? sc->stack[sc->depth - 1] : "",
                     sc->depth ? ">" : "");
            return bad(sc, at, msg);
        }
        sc->depth--;
        return 0;
    }
    if (sc->depth == 0) {
        if (sc->seen_root) return bad(sc, at, "malformed XML: a second root element");
        sc->seen_root = 1;
        if (strcmp(name, "platform") != 0) {
            char msg[96];
            snprintf(msg, sizeof msg, "the root element is <%s>, not <platform>: not a SimGrid "
                     "platform", name);
            return bad(sc, at, msg);
        }
    }
    if (count_hosts(sc, name, a, empty ? b - 1 : b, at) != 0) return -1;
    if (!empty) {
        if (sc->depth == MAX_DEPTH) return bad(sc, at, "elements nested too deeply");
        snprintf(sc->stack[sc->depth++], sizeof sc->stack[0], "%s", name);
    }
    return 0;
}

static int scan_markup(scan *sc) {
    while (sc->p < sc->end) {
        const char *at = sc->p;
        if (*sc->p != '<') {
            if (!is_space(*sc->p) && sc->depth == 0)
                return bad(sc, at, sc->seen_root ? "malformed XML: text after the root element"
                                                 : "not XML: text before the first element");
            sc->p++;
            continue;
        }
        sc->p++;
        const char *close = NULL;
        if (sc->p < sc->end && *sc->p == '?') close = "?>";
        else if (sc->end - sc->p >= 3 && memcmp(sc->p, "!--", 3) == 0) close = "-->";
        else if (sc->end - sc->p >= 8 && memcmp(sc->p, "![CDATA[", 8) == 0) close = "]]>";
        else if (sc->p < sc->end && *sc->p == '!') close = ">";  // <!DOCTYPE ...>
        if (close) {
            if (skip_past(sc, close) != 0)
                return bad(sc, at, "truncated: a comment or declaration is never closed");
            continue;
        }
        if (tag(sc, at) != 0) return -1;
    }
    if (!sc->seen_root) return bad(sc, sc->end, "no <platform> element: not a SimGrid platform");
    if (sc->depth > 0) {
        char msg[128];
        snprintf(msg, sizeof msg, "truncated: <%s> is never closed", sc->stack[sc->depth - 1]);
        return bad(sc, sc->end, msg);
    }
    if (sc->hosts == 0) return bad(sc, sc->end, "the platform declares no hosts");
    if (sc->hosts > 0x7fffffff || sc->cores > 0x7fffffff)
        return bad(sc, sc->end, "more than 2^31 hosts or cores");
    return 0;
}

// The whole file in memory (NUL-terminated); NULL with err.
static char *slurp(const char *path, long *len, dt_error *err) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        dt_fail(err, DT_EXIT_USAGE, "platform file %.300s: cannot read it: %s", path,
                strerror(errno));
        return NULL;
    }
    char *buf = NULL;
    long n = 0, cap = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? cap * 2 : 1 << 16;
            if (cap > MAX_FILE + 1) {
                dt_fail(err, DT_EXIT_USAGE, "platform file %.300s: larger than %ld MiB",
                        path, MAX_FILE >> 20);
                free(buf);
                fclose(f);
                return NULL;
            }
            char *nb = realloc(buf, (size_t)cap + 1);
            if (!nb) {
                free(buf);
                fclose(f);
                dt_fail(err, DT_EXIT_RUNTIME, "platform file %.300s: out of memory", path);
                return NULL;
            }
            buf = nb;
        }
        size_t got = fread(buf + n, 1, (size_t)(cap - n), f);
        n += (long)got;
        if (got == 0) break;
    }
    int failed = ferror(f);
    fclose(f);
    if (failed) {
        free(buf);
        dt_fail(err, DT_EXIT_USAGE, "platform file %.300s: read error (is it a directory?)", path);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

int dt_platform_file_count(const char *xml_path, int *hosts, int *cores, dt_error *err) {
    if (!xml_path || !*xml_path)
        return dt_fail(err, DT_EXIT_USAGE, "platform file: empty path");
    long len = 0;
    char *buf = slurp(xml_path, &len, err);
    if (!buf) return -1;
    scan sc = {.path = xml_path, .s = buf, .end = buf + len, .p = buf, .err = err};
    if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0) sc.p += 3;  // UTF-8 byte order mark
    const char *q = sc.p;
    while (q < sc.end && is_space(*q)) q++;
    int rc;
    if (q == sc.end) rc = dt_fail(err, DT_EXIT_USAGE, "platform file %.300s is empty", xml_path);
    else if (*q != '<' || memchr(buf, '\0', (size_t)len))
        rc = dt_fail(err, DT_EXIT_USAGE, "platform file %.300s: not XML (expected a SimGrid "
                     "platform starting with '<')", xml_path);
    else
        rc = scan_markup(&sc);
    if (rc == 0) {
        if (hosts) *hosts = (int)sc.hosts;
        if (cores) *cores = (int)sc.cores;
    }
    free(buf);
    return rc;
}

int dt_platform_file_hosts(const char *xml_path, int *hosts, dt_error *err) {
    return dt_platform_file_count(xml_path, hosts, NULL, err);
}
