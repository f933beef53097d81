// Units: every accepted form, exact canonical values, rejections with their messages.
#include "models/core/units.h"

#include <gtest/gtest.h>

#include <string>

namespace vtoe::core {
namespace {

std::string error_of(void (*fn)(const char*), const char* text) {
  try {
    fn(text);
  } catch (const UnitError& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(UnitsTime, AcceptsEverySuffixExactly) {
  EXPECT_EQ(parse_time("1s"), 1'000'000'000'000ULL);
  EXPECT_EQ(parse_time("30ms"), 30'000'000'000ULL);
  EXPECT_EQ(parse_time("2.5ms"), 2'500'000'000ULL);
  EXPECT_EQ(parse_time("10us"), 10'000'000ULL);
  EXPECT_EQ(parse_time("10\xC2\xB5s"), 10'000'000ULL);
  EXPECT_EQ(parse_time("100ns"), 100'000ULL);
  EXPECT_EQ(parse_time("7ps"), 7ULL);
  EXPECT_EQ(parse_time("0.000001ms"), 1000ULL);
  EXPECT_EQ(parse_time("0.000000001ms"), 1ULL);
  EXPECT_EQ(parse_time("1e-3s"), 1'000'000'000ULL);
  EXPECT_EQ(parse_time(" 2.50 ms "), 2'500'000'000ULL);
  EXPECT_EQ(parse_time("+4ns"), 4'000ULL);
  EXPECT_EQ(parse_time("0"), 0ULL);
  EXPECT_EQ(parse_time("0.0"), 0ULL);
  EXPECT_EQ(parse_time("0ms"), 0ULL);
}

TEST(UnitsTime, DecimalsAreExactWhereDoublesAreNot) {
  // 0.1 + 0.2 style inputs: a double path would give ...999 or ...001.
  EXPECT_EQ(parse_time("0.3ms"), 300'000'000ULL);
  EXPECT_EQ(parse_time("1.1s"), 1'100'000'000'000ULL);
  EXPECT_EQ(parse_time("4.35us"), 4'350'000ULL);
  EXPECT_EQ(parse_time("18446744.073709551615s"), 18'446'744'073'709'551'615ULL);
}

TEST(UnitsTime, RejectsWithMessages) {
  auto t = [](const char* s) { parse_time(s); };
  EXPECT_EQ(error_of(t, "30 parsecs"),
            "expected a time such as 30ms, 2.5us or 1s, got \"30 parsecs\" (unknown unit "
            "\"parsecs\"; accepted: s, ms, us, ns, ps, \xC2\xB5s)");
  EXPECT_NE(error_of(t, "30").find("a number needs a unit: s, ms, us, ns, ps"), std::string::npos);
  EXPECT_NE(error_of(t, "-1ms").find("must not be negative"), std::string::npos);
  EXPECT_NE(error_of(t, "0.5ps").find("finer than the resolution of 1ps"), std::string::npos);
  EXPECT_NE(error_of(t, "18446744.073709551616s").find("too many significant digits"),
            std::string::npos);
  EXPECT_NE(error_of(t, "18446744.073709551617s").find("too many"), std::string::npos);
  EXPECT_NE(error_of(t, "18446745s").find("too large"), std::string::npos);
  EXPECT_NE(error_of(t, "1000000000s").find("too large"), std::string::npos);
  EXPECT_NE(error_of(t, "").find("empty"), std::string::npos);
  EXPECT_NE(error_of(t, "fast").find("got \"fast\""), std::string::npos);
  EXPECT_NE(error_of(t, "ms").find("got \"ms\""), std::string::npos);
  EXPECT_NE(error_of(t, "1.2.3ms").find("unknown unit"), std::string::npos);
  EXPECT_NE(error_of(t, "30MS").find("unknown unit \"MS\""), std::string::npos);
  EXPECT_NE(error_of(t, "12345678901234567890123ps").find("too many significant digits"),
            std::string::npos);
}

TEST(UnitsTime, BareNumberPolicy) {
  EXPECT_EQ(parse_time("5", BareNumber::BaseUnit), 5ULL);
  EXPECT_THROW(parse_time("5", BareNumber::ZeroOnly), UnitError);
  EXPECT_THROW(parse_time("0", BareNumber::Reject), UnitError);
  EXPECT_EQ(parse_time("0", BareNumber::ZeroOnly), 0ULL);
}

TEST(UnitsFrequency, Forms) {
  EXPECT_EQ(parse_frequency("2GHz"), 2e9);
  EXPECT_EQ(parse_frequency("400MHz"), 4e8);
  EXPECT_EQ(parse_frequency("32.768kHz"), 32768.0);
  EXPECT_EQ(parse_frequency("32.768KHz"), 32768.0);
  EXPECT_EQ(parse_frequency("50Hz"), 50.0);
  EXPECT_EQ(parse_frequency("1THz"), 1e12);
  EXPECT_EQ(parse_frequency("1.5Hz"), 1.5);
  EXPECT_EQ(parse_frequency("0"), 0.0);
  auto f = [](const char* s) { parse_frequency(s); };
  EXPECT_EQ(error_of(f, "fast"), "expected a frequency such as 2GHz or 400MHz, got \"fast\"");
  EXPECT_NE(error_of(f, "2").find("a number needs a unit"), std::string::npos);
  EXPECT_NE(error_of(f, "2Gbps").find("unknown unit \"Gbps\""), std::string::npos);
}

TEST(UnitsBandwidth, Forms) {
  EXPECT_EQ(parse_bandwidth("10Gbps"), 1e10);
  EXPECT_EQ(parse_bandwidth("1Gbit/s"), 1e9);
  EXPECT_EQ(parse_bandwidth("6.4Gbps"), 6.4e9);
  EXPECT_EQ(parse_bandwidth("100Mbps"), 1e8);
  EXPECT_EQ(parse_bandwidth("100 Mbit/s"), 1e8);
  EXPECT_EQ(parse_bandwidth("64kbps"), 64e3);
  EXPECT_EQ(parse_bandwidth("1Tbps"), 1e12);
  EXPECT_EQ(parse_bandwidth("800MB/s"), 6.4e9);  // bytes per second
  EXPECT_EQ(parse_bandwidth("1KiB/s"), 8192.0);
  EXPECT_EQ(parse_bandwidth("0.5bps"), 0.5);
  auto b = [](const char* s) { parse_bandwidth(s); };
  EXPECT_NE(error_of(b, "10").find("expected a bandwidth such as 10Gbps"), std::string::npos);
  EXPECT_NE(error_of(b, "10GHz").find("unknown unit \"GHz\""), std::string::npos);
}

TEST(UnitsBytes, Forms) {
  EXPECT_EQ(parse_bytes("1500B"), 1500ULL);
  EXPECT_EQ(parse_bytes("4kB"), 4000ULL);
  EXPECT_EQ(parse_bytes("1MB"), 1'000'000ULL);
  EXPECT_EQ(parse_bytes("64KiB"), 65'536ULL);
  EXPECT_EQ(parse_bytes("128MiB"), 134'217'728ULL);
  EXPECT_EQ(parse_bytes("1GiB"), 1'073'741'824ULL);
  EXPECT_EQ(parse_bytes("1.5KiB"), 1536ULL);
  EXPECT_EQ(parse_bytes("1500"), 1500ULL);  // bare number = bytes
  auto by = [](const char* s) { parse_bytes(s); };
  EXPECT_NE(error_of(by, "0.5B").find("finer than the resolution of 1B"), std::string::npos);
  EXPECT_NE(error_of(by, "4KB").find("use kB (1000) or KiB (1024)"), std::string::npos);
  EXPECT_NE(error_of(by, "4 apples").find("expected a size such as 1500B"), std::string::npos);
  EXPECT_THROW(parse_bytes("1500", BareNumber::ZeroOnly), UnitError);
}

TEST(UnitsRatio, Forms) {
  EXPECT_EQ(parse_ratio("0.01"), 0.01);
  EXPECT_EQ(parse_ratio("1%"), 0.01);
  EXPECT_EQ(parse_ratio("33.3%"), 0.333);
  EXPECT_EQ(parse_ratio("0"), 0.0);
  EXPECT_EQ(parse_ratio("1"), 1.0);
  auto r = [](const char* s) { parse_ratio(s); };
  EXPECT_NE(error_of(r, "-0.1").find("must not be negative"), std::string::npos);
  EXPECT_NE(error_of(r, "half").find("expected a ratio such as 0.01 or 1%"), std::string::npos);
}

TEST(UnitsFormat, Canonical) {
  EXPECT_EQ(format_time(30'000'000'000ULL), "30ms");
  EXPECT_EQ(format_time(2'500'000'000ULL), "2.5ms");
  EXPECT_EQ(format_time(0), "0s");
  EXPECT_EQ(format_time(1), "1ps");
  EXPECT_EQ(format_time(1'500), "1.5ns");
  EXPECT_EQ(format_time(90 * kPsPerS), "90s");
  EXPECT_EQ(format_time(1'000'001), "1.000001us");
  EXPECT_EQ(format_frequency(2e9), "2GHz");
  EXPECT_EQ(format_frequency(4e8), "400MHz");
  EXPECT_EQ(format_frequency(1.5), "1.5Hz");
  EXPECT_EQ(format_frequency(0), "0Hz");
  EXPECT_EQ(format_bandwidth(1e10), "10Gbps");
  EXPECT_EQ(format_bandwidth(6.4e9), "6.4Gbps");
  EXPECT_EQ(format_bandwidth(0), "0bps");
  EXPECT_EQ(format_bytes(134'217'728ULL), "128MiB");
  EXPECT_EQ(format_bytes(262'144ULL), "256KiB");
  EXPECT_EQ(format_bytes(1500), "1500B");
  EXPECT_EQ(format_bytes(0), "0B");
  EXPECT_EQ(format_ratio(0.01), "0.01");
}

TEST(UnitsFormat, RoundTrips) {
  for (const char* s : {"30ms", "2.5ms", "1ps", "3.000000000007s", "100ns", "0s"}) {
    EXPECT_EQ(format_time(parse_time(s)), s);
  }
  for (const char* s : {"2GHz", "400MHz", "32.768kHz", "1.5Hz", "1e+20Hz"}) {
    EXPECT_EQ(parse_frequency(format_frequency(parse_frequency(s))), parse_frequency(s)) << s;
  }
  for (double v : {1e10, 6.4e9, 0.1, 1.0 / 3.0, 123456789.123}) {
    EXPECT_EQ(parse_bandwidth(format_bandwidth(v)), v);
  }
  for (unsigned long long v : {0ULL, 1ULL, 1500ULL, 65536ULL, 18446744073709551615ULL}) {
    EXPECT_EQ(parse_bytes(format_bytes(v)), v);
  }
  for (double v : {0.0, 0.01, 1.0 / 3.0, 1.0}) EXPECT_EQ(parse_ratio(format_ratio(v)), v);
}

TEST(UnitsNames, Describe) {
  EXPECT_STREQ(unit_name(Unit::Time), "time");
  EXPECT_STREQ(base_unit_symbol(Unit::Bandwidth), "bit/s");
  EXPECT_EQ(accepted_suffixes(Unit::Bytes), "B, kB, MB, GB, TB, KiB, MiB, GiB, TiB");
}

}  // namespace
}  // namespace vtoe::core

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
