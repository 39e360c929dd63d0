# CPack: the Debian package kvsim_<version>_amd64.deb (`cpack -G DEB` in a release build folder,
# docs/install.md). Runtime dependencies come from dpkg-shlibdeps on the installed programs and
# the Python module; the C++ package's header-only and static dependencies are declared beside
# them, since a program built with find_package(kvsim) compiles against them.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME kvsim)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "kvsim")
set(CPACK_PACKAGE_CONTACT "kvsim maintainers <kvsim@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Discrete-event simulator and capacity planner for LLM serving with KV-cache offload")
set(CPACK_PACKAGE_DESCRIPTION
    "kvsim predicts what vLLM V1 does on given GPUs under multi-turn chat or a real trace (TTFT, TPOT,\n\
latency, requests/s, prefix-cache hits) and what offloading the KV cache to host DRAM, local NVMe\n\
or a shared network NVMe store changes. It ships the kvsim command, the kvsim-gui what-if\n\
explorer, the Python module kvsim, a hardware and model catalog, and the C++ libraries as the\n\
CMake package kvsim.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "python3 (>= 3.11)")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS
    "libeigen3-dev, libboost-graph-dev, libyaml-cpp-dev, nlohmann-json3-dev, libsqlite3-dev, g++, cmake")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "python3-pandas, python3-matplotlib")
set(CPACK_STRIP_FILES ON)
include(CPack)
