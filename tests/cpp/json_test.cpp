// The strict JSON reader of the file headers (cpp/src/json.hpp): RFC 8259 grammar, strict UTF-8, escapes and
// surrogates, duplicate keys refused at every depth (compared decoded), navigation, integers read exactly, bounded depth.
#include <catch2/catch.hpp>

#include "json.hpp"

namespace json_test {

using namespace attnscope;

namespace {

bool parses(const std::string& text)
{
    json::Document doc;
    std::string error;
    return doc.parse(text, error);
}

std::string error_of(const std::string& text)
{
    json::Document doc;
    std::string error;
    REQUIRE_FALSE(doc.parse(text, error));
    return error;
}

}  // namespace

TEST_CASE("json: the grammar is strict", "[json]")
{
    for (const char* ok : {"{}", "[]", " {\"a\" : [1, -0, 0.5, 1e3, -2E-2, true, false, null, \"x\"]} ", "\"\"", "0"})
        CHECK(parses(ok));
    for (const char* bad : {"", "{", "[1,]", "{\"a\":1,}", "01", "-", "1.", "1e", ".5", "+1", "NaN", "Infinity", "'a'",
                            "{a:1}", "[1] [2]", "tru", "\"\\x\"", "\"\\u12\"", "\"a\nb\"", "{\"a\" 1}"}) {
        CAPTURE(bad);
        CHECK_FALSE(parses(bad));
    }
    CHECK_THAT(error_of("[1, 2,"), Catch::Contains("at byte 6"));
}

TEST_CASE("json: strict UTF-8 and escapes", "[json]")
{
    CHECK(parses("\"\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80\""));            // é 中 😀
    CHECK_THAT(error_of("\"\xC3\""), Catch::Contains("invalid UTF-8 at byte 1"));
    CHECK_FALSE(parses("\"\xC0\xAF\""));                                // overlong '/'
    CHECK_FALSE(parses("\"\xED\xA0\x80\""));                            // a surrogate encoded in UTF-8
    CHECK_FALSE(parses("\"\xF4\x90\x80\x80\""));                        // above U+10FFFF
    CHECK_FALSE(parses("\"\\ud800\""));                                 // lone high surrogate
    CHECK_FALSE(parses("\"\\udc00\""));                                 // lone low surrogate
    json::Document doc;
    std::string error;
    REQUIRE(doc.parse("[\"\\u00e9\\ud83d\\ude00\\n\\\"\"]", error));
    CHECK(doc.root().first().string() == "\xC3\xA9\xF0\x9F\x98\x80\n\"");
}

TEST_CASE("json: duplicate keys are refused at every depth, compared decoded", "[json]")
{
    // JSON.parse keeps the last of two equal keys, a reader that looks up the first sees the other value: the
    // parser refuses both readings.
    CHECK_THAT(error_of("{\"a\":1,\"b\":2,\"\\u0061\":3}"), Catch::Contains("the key 'a' appears twice in an object (at bytes 1 and 13)"));
    CHECK_THAT(error_of("[{\"layer\":0,\"head\":1,\"layer\":999999}]"), Catch::Contains("the key 'layer' appears twice"));
    CHECK_THAT(error_of("{\"x\":{\"y\":[{\"z\":1,\"z\":2}]}}"), Catch::Contains("the key 'z' appears twice"));
    CHECK(parses("{\"a\":1,\"b\":{\"a\":2},\"c\":[{\"a\":3},{\"a\":4}]}"));  // the same key in different objects
}

TEST_CASE("json: navigation over the text", "[json]")
{
    json::Document doc;
    std::string error;
    REQUIRE(doc.parse(" { \"s\" : \"a]}\\\"\" , \"n\": [ [1, {\"k\": []}], 2.5e1 ], \"e\": {} } ", error));
    const json::Value root = doc.root();
    CHECK(root.is(json::Type::object));
    CHECK(root.size() == 3);
    json::Value v = root;
    REQUIRE(root.find("s", v));
    CHECK(v.string() == "a]}\"");  // brackets and an escaped quote inside a string do not end it
    REQUIRE(root.find("n", v));
    CHECK(v.size() == 2);
    CHECK(v.first().raw() == "[1, {\"k\": []}]");
    CHECK(v.first().following().raw() == "2.5e1");
    CHECK(v.first().following().equals_decimal("25", 0));
    REQUIRE(root.find("e", v));
    CHECK(v.size() == 0);
    CHECK_FALSE(root.find("k", v));  // only the object's own members
    // A failed parse leaves nothing to navigate.
    CHECK_FALSE(doc.parse("[\"unterminated", error));
    CHECK(doc.root().size() == 0);
}

TEST_CASE("json: integers are read exactly, with their bounds", "[json]")
{
    json::Document doc;
    std::string error;
    REQUIRE(doc.parse("[9007199254740991, 9007199254740992, -1, 1.0, 1e2, 18446744073709551616, -0]", error));
    std::uint64_t out = 0;
    json::Value v = doc.root().first();
    CHECK(v.to_index((std::uint64_t(1) << 53) - 1, out));
    CHECK(out == 9007199254740991u);
    CHECK_FALSE(v.following().to_index((std::uint64_t(1) << 53) - 1, out));
    v = v.following().following();
    CHECK_FALSE(v.to_index(10, out));                    // -1
    CHECK_FALSE(v.following().to_index(10, out));        // 1.0: not written as an integer
    CHECK_FALSE(v.following().following().to_index(1000, out));  // 1e2
    CHECK_FALSE(v.following().following().following().to_index(UINT64_MAX, out));  // 2^64
    CHECK(v.following().following().following().following().to_index(0, out));
    CHECK(v.following().equals_decimal("1", 0));                 // 1.0
    CHECK(v.following().following().equals_decimal("1", 2));     // 1e2
    REQUIRE(doc.parse("[0.00001, 1e-5, 1.0E-05, 10e-6, 0.0000100, 1e-6, 2e-5, -1e-5, 0]", error));
    json::Value e = doc.root().first();
    for (int k = 0; k < 5; ++k, e = e.following()) CHECK(e.equals_decimal("1", -5));
    for (int k = 0; k < 3; ++k, e = e.following()) CHECK_FALSE(e.equals_decimal("1", -5));
    CHECK(e.equals_decimal("0", 0));
}

TEST_CASE("json: nesting is bounded", "[json]")
{
    CHECK(parses(std::string(64, '[') + std::string(64, ']')));
    CHECK_THAT(error_of(std::string(65, '[') + std::string(65, ']')), Catch::Contains("nested too deeply"));
    CHECK_THAT(error_of(std::string(100000, '[')), Catch::Contains("nested too deeply"));
}

}  // namespace json_test
