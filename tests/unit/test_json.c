// test_json.c — the strict JSON parser under the safetensors reader (nn/json.c): exact
// decoding of every escape against hand-computed UTF-8 bytes, int64 limits, and rejection of
// what RFC 8259 does not allow (whole malformed headers are in test_safetensors.c); reals
// only when asked for (DT_JSON_REALS); and the writer (nn/json_write.c) read back exactly.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "testutil.h"

static void test_json_decodes_escapes_and_integer_limits_exactly(void **state) {
    (void)state;
    const char *txt = "{\"s\":\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u0041\\u00e9\\u20ac\\ud83d\\ude00\","
                      "\"max\":9223372036854775807,\"min\":-9223372036854775808,\"z\":-0,"
                      "\"t\":true,\"f\":false,\"n\":null,\"e\":[],\"o\":{}}";
    char err[128];
    dt_json *v = dt_json_parse(txt, strlen(txt), err, sizeof err);
    if (!v) fail_msg("parse failed: %s", err);
    const dt_json *s = dt_json_get(v, "s");
    const char *want = "\"\\/\b\f\n\r\tA\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";
    assert_int_equal(s->slen, strlen(want));
    assert_memory_equal(s->s, want, strlen(want));
    assert_true(dt_json_get(v, "max")->i == INT64_MAX);
    assert_true(dt_json_get(v, "min")->i == INT64_MIN);
    assert_int_equal(dt_json_get(v, "z")->i, 0);
    assert_int_equal(dt_json_get(v, "t")->type, DT_JSON_BOOL);
    assert_int_equal(dt_json_get(v, "t")->i, 1);
    assert_int_equal(dt_json_get(v, "n")->type, DT_JSON_NULL);
    assert_int_equal(dt_json_get(v, "e")->n, 0);
    assert_int_equal(dt_json_get(v, "o")->type, DT_JSON_OBJECT);
    assert_int_equal(v->n, 9);
    dt_json_free(v);
    const char *over[] = {"9223372036854775808", "-9223372036854775809", "-", "- 1", "1e3"};
    for (size_t i = 0; i < sizeof over / sizeof *over; i++) {
        v = dt_json_parse(over[i], strlen(over[i]), err, sizeof err);
        if (v) fail_msg("'%s' was accepted", over[i]);
        printf("# %s -> %s\n", over[i], err);
    }
    // UTF-8 validator against the Unicode standard's table of well-formed sequences
    assert_true(dt_json_utf8_valid("\xed\x9f\xbf\xf4\x8f\xbf\xbf", 7));  // U+D7FF, U+10FFFF
    assert_false(dt_json_utf8_valid("\xed\xa0\x80", 3));  // a surrogate
    assert_false(dt_json_utf8_valid("\xc0\xaf", 2));      // overlong '/'
    assert_false(dt_json_utf8_valid("\xf4\x90\x80\x80", 4));  // > U+10FFFF
    assert_false(dt_json_utf8_valid("\xe2\x82", 2));      // truncated
}

static void test_json_rejects_what_rfc8259_forbids_and_names_the_byte(void **state) {
    (void)state;
    static const struct {
        const char *text;
        size_t at;  // the byte offset the message must give
    } bad[] = {
        {"[1,2", 4},  {"{\"a\":1,}", 7}, {"[01]", 2},  {"+1", 0},     {"[.5]", 1},
        {"\"\\u12G4\"", 5}, {"\"\\udc00\"", 7}, {"nul", 0}, {"[1] x", 4}, {"\"a\tb\"", 2},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char err[128], want[32];
        dt_json *v = dt_json_parse(bad[i].text, strlen(bad[i].text), err, sizeof err);
        if (v) fail_msg("'%s' was accepted", bad[i].text);
        snprintf(want, sizeof want, "at byte %zu:", bad[i].at);
        printf("# %-10s -> %s\n", bad[i].text, err);
        if (strncmp(err, want, strlen(want)) != 0) {
            fail_msg("'%s': %s (want %s)", bad[i].text, err, want);
        }
    }
    // whitespace of all four kinds around a value is fine; a form feed is not whitespace
    dt_json *v = dt_json_parse(" \t\r\n[ 1 ]\n", 9, NULL, 0);
    assert_non_null(v);
    assert_int_equal(v->n, 1);
    assert_int_equal(v->child->i, 1);
    dt_json_free(v);
    assert_null(dt_json_parse("\f[]", 3, NULL, 0));
}

static void test_json_reals_parse_only_with_the_flag_and_follow_rfc8259(void **state) {
    (void)state;
    static const struct {
        const char *text;
        double want;
    } good[] = {{"1.5", 1.5}, {"-0.25e-3", -0.25e-3}, {"1E2", 100}, {"2e+1", 20},
                {"0.1", 0.1}, {"123456789012345678901.5", 123456789012345678901.5},
                {"1e-400", 0}};  // underflow to zero is accepted
    char err[128];
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        const char *t = good[i].text;
        assert_null(dt_json_parse(t, strlen(t), err, sizeof err));  // integers only
        assert_true(strstr(err, "non-integer number") || strstr(err, "int64 range"));
        dt_json *v = dt_json_parse_flags(t, strlen(t), DT_JSON_REALS, err, sizeof err);
        if (!v) fail_msg("'%s' was rejected: %s", t, err);
        assert_int_equal(v->type, DT_JSON_REAL);
        if (v->d != good[i].want) fail_msg("'%s' read as %.17g", t, v->d);
        dt_json_free(v);
    }
    // integers stay integers, with their value as a double beside
    dt_json *v = dt_json_parse_flags("[-7]", 4, DT_JSON_REALS, err, sizeof err);
    assert_int_equal(v->child->type, DT_JSON_INT);
    assert_true(v->child->i == -7 && v->child->d == -7.0);
    dt_json_free(v);
    const char *bad[] = {"1.", ".5", "1e", "1e+", "01.5", "1.e3", "-.5", "1e999", "1.5.2"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        v = dt_json_parse_flags(bad[i], strlen(bad[i]), DT_JSON_REALS, err, sizeof err);
        if (v) fail_msg("'%s' was accepted", bad[i]);
        printf("# %-6s -> %s\n", bad[i], err);
    }
}

static void test_json_writer_output_parses_back_to_the_same_values(void **state) {
    (void)state;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    dt_json_writer w;
    dt_json_writer_init(&w, f);
    dt_json_begin_object(&w, NULL);
    dt_json_write_string(&w, "s", "q\"b\\n\nt\tc\x01\xc3\xa9");
    dt_json_write_int(&w, "min", INT64_MIN);
    dt_json_write_real(&w, "tenth", 0.1);
    dt_json_write_real(&w, "tiny", 5e-324);
    dt_json_write_real(&w, "nan", NAN);
    dt_json_begin_array(&w, "a");
    dt_json_write_real(&w, NULL, 2.0);
    dt_json_begin_object(&w, NULL);
    dt_json_end_object(&w);
    dt_json_end_array(&w);
    dt_json_end_object(&w);
    fclose(f);
    printf("# %s", buf);
    assert_string_equal(buf + len - 2, "}\n");  // one line
    assert_null(memchr(buf, '\n', len - 1));
    char err[128];
    dt_json *v = dt_json_parse_flags(buf, len, DT_JSON_REALS, err, sizeof err);
    if (!v) fail_msg("the writer's output does not parse: %s\n%s", err, buf);
    assert_string_equal(dt_json_get(v, "s")->s, "q\"b\\n\nt\tc\x01\xc3\xa9");
    assert_true(dt_json_get(v, "min")->i == INT64_MIN);
    assert_true(dt_json_get(v, "tenth")->d == 0.1);  // 17 digits: exact
    assert_true(dt_json_get(v, "tiny")->d == 5e-324);
    assert_int_equal(dt_json_get(v, "nan")->type, DT_JSON_NULL);
    const dt_json *a = dt_json_get(v, "a");
    assert_int_equal(a->n, 2);
    assert_true(a->child->d == 2.0);  // written "2": an integer with the same value
    assert_int_equal(a->child->next->type, DT_JSON_OBJECT);
    dt_json_free(v);
    free(buf);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_decodes_escapes_and_integer_limits_exactly),
        cmocka_unit_test(test_json_rejects_what_rfc8259_forbids_and_names_the_byte),
        cmocka_unit_test(test_json_reals_parse_only_with_the_flag_and_follow_rfc8259),
        cmocka_unit_test(test_json_writer_output_parses_back_to_the_same_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
