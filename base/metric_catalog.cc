// SPDX-License-Identifier: Apache-2.0
// base/metric_catalog.cc
#include "base/metric_catalog.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>

namespace registry::metrics {
namespace {

struct Catalog {
  std::mutex mu;
  std::map<std::string, const FamilyBase*> by_name;  // guarded by mu
};

Catalog& TheCatalog() {
  static Catalog* const catalog = new Catalog();  // never destroyed, like the families
  return *catalog;
}

}  // namespace

void RegisterFamilies(const std::vector<const FamilyBase*>& families) {
  Catalog& catalog = TheCatalog();
  std::lock_guard<std::mutex> lock(catalog.mu);
  for (const FamilyBase* family : families) {
    if (!catalog.by_name.emplace(family->name(), family).second) {
      std::fprintf(stderr, "registry metrics: family %s registered twice\n",
                   family->name().c_str());
      std::abort();
    }
  }
}

std::vector<const FamilyBase*> RegisteredFamilies() {
  Catalog& catalog = TheCatalog();
  std::lock_guard<std::mutex> lock(catalog.mu);
  std::vector<const FamilyBase*> families;
  families.reserve(catalog.by_name.size());
  for (const auto& [name, family] : catalog.by_name) families.push_back(family);
  return families;
}

std::string MetricsExposition() { return ExpositionText(RegisteredFamilies()); }

void VisitMetrics(const SampleVisitor& visit) {
  for (const FamilyBase* family : RegisteredFamilies()) family->Visit(visit);
}

}  // namespace registry::metrics
