#pragma once
// The catalog: named GPU, model, NVMe drive and storage-node entries (scenarios/catalog/gpus.yaml,
// models.yaml, drives.yaml, storage.yaml) that a
// scenario's `preset:` keys copy. Each file is a map from name to an entry with the same keys
// as the struct's field table, decoded by the same tables; the map key is the entry's name.
#include <map>
#include <string>

#include "hw/gpu_spec.hpp"
#include "models/model_spec.hpp"

namespace kvsim::scenario {

struct Catalog {
  std::map<std::string, hw::GpuSpec> gpus;
  std::map<std::string, models::ModelSpec> models;
  std::map<std::string, hw::NvmeDriveSpec> drives;      // drives.yaml
  std::map<std::string, hw::StorageNodeSpec> storage;   // storage.yaml
  std::string dir;  // the folder the files came from
};

// Reads <dir>/gpus.yaml, models.yaml, drives.yaml and storage.yaml; a file that does not exist
// gives an empty map.
// Throws InputError with every problem found (a missing folder, syntax, unknown keys, ...).
Catalog load_catalog(const std::string& dir);

// The first `scenarios/catalog` folder found in the folder of `near_path` (a file or a folder)
// or any folder above it, as an absolute path; empty when there is none.
std::string find_catalog_dir(const std::string& near_path);

// The catalog of an installed kvsim: the first share/kvsim/scenarios/catalog folder in or above
// the folder of the running program or of the module holding this code (an installed Python
// module finds <prefix>/share/kvsim from <prefix>/lib/python3/dist-packages/kvsim). Empty when
// there is none (a build tree).
std::string installed_catalog_dir();

// The catalog folder a command uses, in this order: `given`, find_catalog_dir(near_path),
// installed_catalog_dir(), the source tree's scenarios/catalog (a build tree). Empty when none
// exists. No environment is read here: the programs (kvsim, kvsim-gui, the Python module) give
// --catalog, else the KVSIM_CATALOG_DIR environment variable, as `given`.
std::string resolve_catalog_dir(const std::string& given, const std::string& near_path);

// load_catalog(resolve_catalog_dir(given, near_path)); when no folder is found, an error
// naming every place looked at.
Catalog load_catalog_for(const std::string& given, const std::string& near_path);

}  // namespace kvsim::scenario
