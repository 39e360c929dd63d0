#include "sim/scenario/catalog.hpp"

#include <dlfcn.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/scenario/tables.hpp"
#include "sim/scenario/yaml_codec.hpp"

namespace kvsim::scenario {
namespace {

namespace fs = std::filesystem;

// Decodes one catalog file into `entries`; problems go to `diagnostics`.
template <class Spec>
void load_file(const fs::path& file, const StructTable& table, std::map<std::string, Spec>& entries,
               std::vector<Diagnostic>& diagnostics) {
  std::error_code ec;
  if (!fs::exists(file, ec)) return;
  const std::string name = file.string();
  std::ifstream in(file);
  if (!in) {
    diagnostics.push_back(Diagnostic{name, 0, 0, "", "cannot read the file"});
    return;
  }
  std::ostringstream text;
  text << in.rdbuf();
  const auto root = detail::parse_yaml(text.str(), name, diagnostics);
  if (!root || root->IsNull()) return;
  detail::Decoder decoder(name);
  if (!root->IsMap()) {
    decoder.report(*root, nullptr, "", "expected a map from entry names to entries");
  } else {
    for (auto it = root->begin(); it != root->end(); ++it) {
      if (!it->first.IsScalar()) {
        decoder.report(it->first, nullptr, "", "expected an entry name");
        continue;
      }
      const std::string key = it->first.Scalar();
      if (entries.count(key) != 0) {
        decoder.report(it->first, nullptr, key, "duplicate entry");
        continue;
      }
      Spec spec{};
      decoder.decode(it->second, &spec, table, key);
      if (spec.name.empty()) spec.name = key;
      if (spec.name != key) {
        decoder.report(it->second, nullptr, key + ".name",
                       "must equal its catalog key '" + key + "', got '" + spec.name + "'");
      }
      entries.emplace(key, std::move(spec));
    }
  }
  for (auto& d : decoder.diagnostics()) diagnostics.push_back(std::move(d));
}

// The first folder `start / relative`, `start/.. / relative`, ... that exists; empty when none.
std::string folder_in_or_above(fs::path start, const fs::path& relative) {
  std::error_code ec;
  while (true) {
    const fs::path candidate = start / relative;
    if (fs::is_directory(candidate, ec)) return candidate.string();
    if (!start.has_parent_path() || start.parent_path() == start) return {};
    start = start.parent_path();
  }
}

}  // namespace

Catalog load_catalog(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw InputError(Diagnostic{dir, 0, 0, "", "catalog folder not found"});
  }
  Catalog catalog;
  catalog.dir = dir;
  std::vector<Diagnostic> diagnostics;
  load_file(fs::path(dir) / "gpus.yaml", gpu_table(), catalog.gpus, diagnostics);
  load_file(fs::path(dir) / "models.yaml", model_table(), catalog.models, diagnostics);
  load_file(fs::path(dir) / "drives.yaml", nvme_drive_table(), catalog.drives, diagnostics);
  load_file(fs::path(dir) / "storage.yaml", storage_node_table(), catalog.storage, diagnostics);
  if (!diagnostics.empty()) {
    detail::sort_diagnostics(diagnostics);
    throw InputError(std::move(diagnostics));
  }
  return catalog;
}

std::string find_catalog_dir(const std::string& near_path) {
  std::error_code ec;
  fs::path p = fs::absolute(near_path.empty() ? fs::path(".") : fs::path(near_path), ec);
  if (ec) return {};
  p = p.lexically_normal();
  if (!fs::is_directory(p, ec)) p = p.parent_path();
  return folder_in_or_above(p, fs::path("scenarios") / "catalog");
}

std::string installed_catalog_dir() {
  // Where the code runs from: the executable (/proc/self/exe), and the file that holds this
  // function, which differs when the libraries are loaded as a module (the Python package).
  std::vector<fs::path> starts;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) starts.push_back(exe.parent_path());
  Dl_info info{};
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): dladdr takes any code address.
  if (dladdr(reinterpret_cast<void*>(&installed_catalog_dir), &info) != 0 &&
      info.dli_fname != nullptr) {
    const fs::path object = fs::canonical(info.dli_fname, ec);
    if (!ec) starts.push_back(object.parent_path());
  }
  for (const fs::path& p : starts) {
    std::string found = folder_in_or_above(p, fs::path("share") / "kvsim" / "scenarios" / "catalog");
    if (!found.empty()) return found;
  }
  return {};
}

std::string resolve_catalog_dir(const std::string& given, const std::string& near_path) {
  if (!given.empty()) return given;
  std::string found = find_catalog_dir(near_path);
  if (!found.empty()) return found;
  found = installed_catalog_dir();
  if (!found.empty()) return found;
#ifdef KVSIM_DEFAULT_CATALOG_DIR
  std::error_code ec;
  if (fs::is_directory(KVSIM_DEFAULT_CATALOG_DIR, ec)) return KVSIM_DEFAULT_CATALOG_DIR;
#endif
  return {};
}

Catalog load_catalog_for(const std::string& given, const std::string& near_path) {
  const std::string dir = resolve_catalog_dir(given, near_path);
  if (dir.empty()) {
    std::error_code ec;
    const fs::path from = fs::absolute(near_path.empty() ? fs::path(".") : fs::path(near_path), ec);
    throw InputError(Diagnostic{
        "", 0, 0, "",
        "no catalog folder found: --catalog is not given, KVSIM_CATALOG_DIR is not set, and no "
        "scenarios/catalog lies in or above " +
            from.lexically_normal().string() +
            ", and kvsim is not installed with share/kvsim/scenarios/catalog above its program"
            " (give --catalog DIR or set KVSIM_CATALOG_DIR)"});
  }
  return load_catalog(dir);
}

}  // namespace kvsim::scenario
