// smmu::Stage2Table: map/translate/unmap, permissions, attributes, errors, range contiguity,
// region merging, and a differential test against a naive page map.
#include "models/smmu/stage2_table.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <stdexcept>
#include <string>

using vtoe::smmu::FaultKind;
using vtoe::smmu::kPageSize;
using vtoe::smmu::MemAttr;
using vtoe::smmu::Perm;
using vtoe::smmu::Stage2Table;
using vtoe::smmu::TranslationFault;

namespace {

constexpr std::uint64_t kMiB = 1ull << 20;

// The message of the std::invalid_argument `f` throws, or "" (and a failure) if it does not.
template <typename F>
std::string invalid_argument_message(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  ADD_FAILURE() << "no std::invalid_argument";
  return "";
}

}  // namespace

TEST(Stage2Table, MapTranslateUnmap) {
  Stage2Table t("vm1.stage2");
  EXPECT_TRUE(t.empty());
  t.map(0x4000'0000, 0x0010'0000, 2 * kPageSize, Perm::rw());
  EXPECT_EQ(t.mapped_bytes(), 2 * kPageSize);

  auto r = t.translate(0x4000'0123, false);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->pa, 0x0010'0123u);
  EXPECT_EQ(r->attr, MemAttr::Normal);
  r = t.translate(0x4000'1fff, true);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->pa, 0x0010'1fffu);

  TranslationFault f;
  EXPECT_FALSE(t.translate(0x4000'2000, false, &f));  // one past the end
  EXPECT_EQ(f.kind, FaultKind::Unmapped);
  EXPECT_EQ(f.ipa, 0x4000'2000u);
  EXPECT_FALSE(t.translate(0x3fff'ffff, false, &f));  // one before the start
  EXPECT_EQ(f.kind, FaultKind::Unmapped);

  EXPECT_EQ(t.unmap(0x4000'0000, kPageSize), kPageSize);
  EXPECT_FALSE(t.translate(0x4000'0000, false));
  r = t.translate(0x4000'1000, false);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->pa, 0x0010'1000u);
  EXPECT_EQ(t.unmap(0x4000'0000, 4 * kPageSize), kPageSize);  // holes are fine
  EXPECT_TRUE(t.empty());
  EXPECT_EQ(t.mapped_bytes(), 0u);
  EXPECT_EQ(t.unmap(0x4000'0000, kPageSize), 0u);
}

TEST(Stage2Table, PermissionsAndAttributes) {
  Stage2Table t;
  t.map(0x0000, 0x10'0000, kPageSize, Perm::ro());
  t.map(0x1000, 0x20'0000, kPageSize, Perm::wo());
  t.map(0x2000, 0x30'0000, kPageSize, Perm::none());
  t.map(0x3000, 0x1c00'0000, kPageSize, Perm::rw(), MemAttr::Device);

  TranslationFault f;
  EXPECT_TRUE(t.translate(0x0010, false));
  EXPECT_FALSE(t.translate(0x0010, true, &f));
  EXPECT_EQ(f.kind, FaultKind::Permission);
  EXPECT_EQ(f.ipa, 0x0010u);
  EXPECT_FALSE(t.translate(0x1010, false, &f));
  EXPECT_EQ(f.kind, FaultKind::Permission);
  EXPECT_TRUE(t.translate(0x1010, true));
  EXPECT_FALSE(t.translate(0x2000, false, &f));
  EXPECT_EQ(f.kind, FaultKind::Permission);
  EXPECT_FALSE(t.translate(0x2000, true, &f));
  EXPECT_EQ(f.kind, FaultKind::Permission);
  auto dev = t.translate(0x3004, true);
  ASSERT_TRUE(dev);
  EXPECT_EQ(dev->attr, MemAttr::Device);
  EXPECT_EQ(dev->pa, 0x1c00'0004u);
  EXPECT_EQ(dev->perm, Perm::rw());

  // protect() changes permissions in place and needs the whole range mapped.
  t.protect(0x0000, kPageSize, Perm::rw());
  EXPECT_TRUE(t.translate(0x0010, true));
  const std::string msg =
      invalid_argument_message([&] { t.protect(0x3000, 2 * kPageSize, Perm::ro()); });
  EXPECT_NE(msg.find("0x4000"), std::string::npos) << msg;
  EXPECT_TRUE(t.translate(0x3000, true)) << "failed protect() must not change the table";
}

TEST(Stage2Table, OverlapThrowsNamingTheRange) {
  Stage2Table t("vm2.stage2");
  t.map(0x10'0000, 0x80'0000, 16 * kPageSize, Perm::rw());
  const auto before = t.regions();
  // Inside, straddling the start, straddling the end, covering it whole.
  for (std::uint64_t ipa : {0x10'4000ull, 0x0f'f000ull, 0x10'f000ull}) {
    const std::string msg =
        invalid_argument_message([&] { t.map(ipa, 0x100'0000, 2 * kPageSize, Perm::rw()); });
    EXPECT_NE(msg.find("vm2.stage2"), std::string::npos) << msg;
    EXPECT_NE(msg.find("overlaps"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[0x100000, 0x110000)"), std::string::npos) << msg;
  }
  EXPECT_THROW(t.map(0, 0x100'0000, 64 * kMiB, Perm::rw()), std::invalid_argument);
  ASSERT_EQ(t.regions().size(), before.size());
  EXPECT_EQ(t.regions()[0].ipa, before[0].ipa);
  EXPECT_EQ(t.regions()[0].size, before[0].size);
  // Touching is not overlapping.
  t.map(0x0f'f000, 0x100'0000, kPageSize, Perm::rw());
  t.map(0x11'0000, 0x200'0000, kPageSize, Perm::rw());
  EXPECT_EQ(t.region_count(), 3u);
}

TEST(Stage2Table, RejectsMisalignedEmptyAndWrappingRanges) {
  Stage2Table t;
  EXPECT_THROW(t.map(0x1001, 0x2000, kPageSize, Perm::rw()), std::invalid_argument);
  EXPECT_THROW(t.map(0x1000, 0x2001, kPageSize, Perm::rw()), std::invalid_argument);
  EXPECT_THROW(t.map(0x1000, 0x2000, 100, Perm::rw()), std::invalid_argument);
  EXPECT_THROW(t.map(0x1000, 0x2000, 0, Perm::rw()), std::invalid_argument);
  EXPECT_THROW(t.map(~0ull - 0xfff, 0x2000, 2 * kPageSize, Perm::rw()), std::invalid_argument);
  EXPECT_THROW(t.map(0x1000, ~0ull - 0xfff, 2 * kPageSize, Perm::rw()), std::invalid_argument);
  EXPECT_THROW(t.unmap(0x1800, kPageSize), std::invalid_argument);
  EXPECT_TRUE(t.empty());
  // The top page of the address space is mappable.
  t.map(~0ull - 0xfff, 0x2000, kPageSize, Perm::rw());
  auto r = t.translate(~0ull, false);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->pa, 0x2fffu);
  EXPECT_FALSE(t.translate_range(~0ull, 2, false)) << "a range past 2^64 cannot translate";
  EXPECT_EQ(t.unmap(~0ull - 0xfff, kPageSize), kPageSize);
}

TEST(Stage2Table, RangeContiguityAcrossPages) {
  Stage2Table t;
  // IPA pages 0..3: 0,1 -> contiguous PA; 2 -> elsewhere; 3 -> follows 2.
  t.map(0x0000, 0x10'0000, 2 * kPageSize, Perm::rw());
  t.map(0x2000, 0x50'0000, kPageSize, Perm::rw());
  t.map(0x3000, 0x50'1000, kPageSize, Perm::ro());  // contiguous PA, different permission

  auto r = t.translate_range(0x0800, 0x1000, true);  // pages 0-1
  ASSERT_TRUE(r);
  EXPECT_EQ(r->pa, 0x10'0800u);
  EXPECT_TRUE(r->contiguous);
  EXPECT_EQ(r->contiguous_len, 0x1000u);

  r = t.translate_range(0x1f00, 0x200, true);  // pages 1-2: split at 0x2000
  ASSERT_TRUE(r);
  EXPECT_EQ(r->pa, 0x10'1f00u);
  EXPECT_FALSE(r->contiguous);
  EXPECT_EQ(r->contiguous_len, 0x100u);

  r = t.translate_range(0x2f00, 0x200, false);  // pages 2-3: contiguous across regions
  ASSERT_TRUE(r);
  EXPECT_EQ(r->pa, 0x50'0f00u);
  EXPECT_TRUE(r->contiguous);
  EXPECT_EQ(r->contiguous_len, 0x200u);

  TranslationFault f;
  EXPECT_FALSE(t.translate_range(0x2f00, 0x200, true, &f));  // page 3 is read-only
  EXPECT_EQ(f.kind, FaultKind::Permission);
  EXPECT_EQ(f.ipa, 0x3000u);
  EXPECT_FALSE(t.translate_range(0x3f00, 0x200, false, &f));  // runs into unmapped page 4
  EXPECT_EQ(f.kind, FaultKind::Unmapped);
  EXPECT_EQ(f.ipa, 0x4000u);
  EXPECT_FALSE(t.translate_range(0x8000, 1, false, &f));
  EXPECT_EQ(f.kind, FaultKind::Unmapped);
  EXPECT_EQ(f.ipa, 0x8000u);

  r = t.translate_range(0x0000, 0x4000, false);  // all four pages
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->contiguous);
  EXPECT_EQ(r->contiguous_len, 0x2000u);
  r = t.translate_range(0x10, 0, false);  // length 0 checks one byte
  ASSERT_TRUE(r);
  EXPECT_EQ(r->pa, 0x10'0010u);
}

TEST(Stage2Table, LargeMapsAreAHandfulOfRegions) {
  Stage2Table whole;
  whole.map(0x8000'0000, 0x0800'0000, 128 * kMiB, Perm::rw());
  EXPECT_EQ(whole.region_count(), 1u);
  EXPECT_EQ(whole.mapped_bytes(), 128 * kMiB);
  auto r = whole.translate_range(0x8000'0000, 128 * kMiB, true);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->contiguous);
  EXPECT_EQ(r->contiguous_len, 128 * kMiB);

  // Page by page, in a scrambled order: neighbours merge into one region.
  Stage2Table paged;
  const std::uint64_t pages = 128 * kMiB / kPageSize;
  for (std::uint64_t i = 0; i < pages; ++i) {
    const std::uint64_t p = (i * 7919) % pages;  // 7919 is prime, coprime with 2^15
    paged.map(0x8000'0000 + p * kPageSize, 0x0800'0000 + p * kPageSize, kPageSize, Perm::rw());
  }
  EXPECT_EQ(paged.region_count(), 1u);
  EXPECT_EQ(paged.mapped_bytes(), 128 * kMiB);

  // A read-only page in the middle splits it in three; restoring it merges them back.
  paged.protect(0x8100'0000, kPageSize, Perm::ro());
  EXPECT_EQ(paged.region_count(), 3u);
  paged.protect(0x8100'0000, kPageSize, Perm::rw());
  EXPECT_EQ(paged.region_count(), 1u);
  // A hole splits it in two.
  EXPECT_EQ(paged.unmap(0x8100'0000, kPageSize), kPageSize);
  EXPECT_EQ(paged.region_count(), 2u);
  // A different attribute does not merge.
  paged.map(0x8100'0000, 0x0900'0000, kPageSize, Perm::rw(), MemAttr::Device);
  EXPECT_EQ(paged.region_count(), 3u);
}

TEST(Stage2Table, GenerationCountsChanges) {
  Stage2Table t;
  const auto g0 = t.generation();
  t.map(0, 0, kPageSize, Perm::rw());
  const auto g1 = t.generation();
  EXPECT_GT(g1, g0);
  EXPECT_THROW(t.map(0, 0, kPageSize, Perm::rw()), std::invalid_argument);
  EXPECT_EQ(t.generation(), g1) << "a failed map is not a change";
  t.unmap(0x1000, kPageSize);
  EXPECT_EQ(t.generation(), g1) << "unmapping nothing is not a change";
  t.unmap(0, kPageSize);
  EXPECT_GT(t.generation(), g1);
}

// Differential test: random map/unmap/protect/translate/translate_range against a naive map of
// one entry per page. 10k operations over a small IPA window so that they collide often.
TEST(Stage2Table, MatchesNaivePageMapOnRandomOperations) {
  struct Page {
    std::uint64_t pa_page;
    Perm perm;
    MemAttr attr;
  };
  std::map<std::uint64_t, Page> ref;  // IPA page -> entry
  Stage2Table t("diff");
  std::mt19937_64 rng(12345);
  constexpr std::uint64_t kIpaPages = 256;
  constexpr std::uint64_t kPaPages = 512;
  const Perm perms[] = {Perm::rw(), Perm::ro(), Perm::wo(), Perm::none()};
  auto uni = [&](std::uint64_t lo, std::uint64_t hi) {  // inclusive
    return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng);
  };
  std::size_t maps = 0, overlaps = 0, faults = 0;

  for (int op = 0; op < 10'000; ++op) {
    const auto kind = uni(0, 9);
    if (kind <= 2) {  // map
      const std::uint64_t ipa_page = uni(0, kIpaPages - 1);
      const std::uint64_t n = uni(1, std::min<std::uint64_t>(16, kIpaPages - ipa_page));
      // Half the time, continue the PA of the IPA page before (to exercise merging).
      std::uint64_t pa_page = uni(0, kPaPages - 1);
      auto prev = ref.find(ipa_page - 1);
      if (prev != ref.end() && uni(0, 1) == 0) pa_page = prev->second.pa_page + 1;
      const Perm perm = perms[uni(0, 3)];
      const MemAttr attr = uni(0, 7) == 0 ? MemAttr::Device : MemAttr::Normal;
      bool overlap = false;
      for (std::uint64_t i = 0; i < n; ++i) overlap |= ref.count(ipa_page + i) != 0;
      if (overlap) {
        ++overlaps;
        EXPECT_THROW(t.map(ipa_page * kPageSize, pa_page * kPageSize, n * kPageSize, perm, attr),
                     std::invalid_argument);
      } else {
        ++maps;
        t.map(ipa_page * kPageSize, pa_page * kPageSize, n * kPageSize, perm, attr);
        for (std::uint64_t i = 0; i < n; ++i) ref[ipa_page + i] = Page{pa_page + i, perm, attr};
      }
    } else if (kind == 3) {  // unmap
      const std::uint64_t ipa_page = uni(0, kIpaPages - 1);
      const std::uint64_t n = uni(1, std::min<std::uint64_t>(24, kIpaPages - ipa_page));
      std::uint64_t expect = 0;
      for (std::uint64_t i = 0; i < n; ++i) expect += ref.erase(ipa_page + i) * kPageSize;
      EXPECT_EQ(t.unmap(ipa_page * kPageSize, n * kPageSize), expect);
    } else if (kind == 4) {  // protect
      const std::uint64_t ipa_page = uni(0, kIpaPages - 1);
      const std::uint64_t n = uni(1, std::min<std::uint64_t>(8, kIpaPages - ipa_page));
      const Perm perm = perms[uni(0, 3)];
      bool all = true;
      for (std::uint64_t i = 0; i < n; ++i) all &= ref.count(ipa_page + i) != 0;
      if (all) {
        t.protect(ipa_page * kPageSize, n * kPageSize, perm);
        for (std::uint64_t i = 0; i < n; ++i) ref[ipa_page + i].perm = perm;
      } else {
        EXPECT_THROW(t.protect(ipa_page * kPageSize, n * kPageSize, perm), std::invalid_argument);
      }
    } else if (kind <= 6) {  // translate one address
      const std::uint64_t ipa = uni(0, kIpaPages * kPageSize);
      const bool write = uni(0, 1) == 1;
      TranslationFault f;
      const auto r = t.translate(ipa, write, &f);
      auto it = ref.find(ipa / kPageSize);
      if (it == ref.end()) {
        ASSERT_FALSE(r) << "op " << op;
        EXPECT_EQ(f.kind, FaultKind::Unmapped);
        ++faults;
      } else if (!it->second.perm.allows(write)) {
        ASSERT_FALSE(r) << "op " << op;
        EXPECT_EQ(f.kind, FaultKind::Permission);
        ++faults;
      } else {
        ASSERT_TRUE(r) << "op " << op;
        EXPECT_EQ(r->pa, it->second.pa_page * kPageSize + ipa % kPageSize);
        EXPECT_EQ(r->attr, it->second.attr);
        EXPECT_EQ(r->perm, it->second.perm);
      }
    } else {  // translate a range
      const std::uint64_t ipa = uni(0, kIpaPages * kPageSize);
      const std::uint64_t len = uni(1, 6 * kPageSize);
      const bool write = uni(0, 1) == 1;
      // Reference: walk the pages.
      bool ok = true;
      FaultKind kind_ref = FaultKind::Unmapped;
      std::uint64_t fault_ipa = 0, contiguous_len = 0;
      bool contiguous = true;
      std::uint64_t expect_pa = 0;
      for (std::uint64_t a = ipa; a < ipa + len; a = (a / kPageSize + 1) * kPageSize) {
        auto it = ref.find(a / kPageSize);
        if (it == ref.end() || !it->second.perm.allows(write)) {
          ok = false;
          kind_ref = it == ref.end() ? FaultKind::Unmapped : FaultKind::Permission;
          fault_ipa = a;
          break;
        }
        const std::uint64_t pa = it->second.pa_page * kPageSize + a % kPageSize;
        const std::uint64_t n = std::min((a / kPageSize + 1) * kPageSize, ipa + len) - a;
        if (a == ipa) {
          expect_pa = pa;
        } else if (contiguous && pa != expect_pa + contiguous_len) {
          contiguous = false;
        }
        if (contiguous) contiguous_len += n;
      }
      TranslationFault f;
      const auto r = t.translate_range(ipa, len, write, &f);
      ASSERT_EQ(static_cast<bool>(r), ok) << "op " << op << " ipa " << ipa << " len " << len;
      if (ok) {
        EXPECT_EQ(r->pa, expect_pa);
        EXPECT_EQ(r->contiguous, contiguous);
        EXPECT_EQ(r->contiguous_len, contiguous_len);
      } else {
        ++faults;
        EXPECT_EQ(f.kind, kind_ref);
        EXPECT_EQ(f.ipa, fault_ipa);
      }
    }

    // Structure: the regions tile exactly the reference pages, and nothing that lines up is
    // left unmerged.
    if (op % 97 == 0 || op == 9'999) {
      std::uint64_t pages = 0;
      const auto regions = t.regions();
      for (std::size_t i = 0; i < regions.size(); ++i) {
        const auto& g = regions[i];
        for (std::uint64_t p = 0; p < g.size / kPageSize; ++p) {
          auto it = ref.find(g.ipa / kPageSize + p);
          ASSERT_NE(it, ref.end());
          EXPECT_EQ(it->second.pa_page, g.pa / kPageSize + p);
          EXPECT_EQ(it->second.perm, g.perm);
          EXPECT_EQ(it->second.attr, g.attr);
        }
        pages += g.size / kPageSize;
        if (i > 0) {
          const auto& p = regions[i - 1];
          const bool lines_up = p.ipa + p.size == g.ipa && p.pa + p.size == g.pa &&
                                p.perm == g.perm && p.attr == g.attr;
          EXPECT_FALSE(lines_up) << "unmerged regions at 0x" << std::hex << g.ipa;
        }
      }
      ASSERT_EQ(pages, ref.size()) << "op " << op;
      EXPECT_EQ(t.mapped_bytes(), ref.size() * kPageSize);
    }
  }
  // The random mix really exercised every path.
  EXPECT_GT(maps, 200u);
  EXPECT_GT(overlaps, 200u);
  EXPECT_GT(faults, 500u);
}

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
