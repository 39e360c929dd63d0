#!/usr/bin/env bash
# An installed kvsim used as a user uses it, from a folder that is not the source tree:
#   install_test.sh --deb FILE.deb SOURCE_DIR     the Debian package, unpacked into a clean prefix
#   install_test.sh --build-dir DIR SOURCE_DIR    `cmake --install DIR` into a clean prefix
# Then, from a fresh folder under /tmp: `kvsim catalog` finds the installed catalog, `kvsim run`
# runs an installed seed scenario, python3 imports the installed module and runs one, and a C++
# program built with find_package(kvsim) links kvsim::scenario and runs one.
set -euo pipefail
mode=${1:?--deb FILE or --build-dir DIR}
what=${2:?}
src=$(cd "${3:?source dir}" && pwd)
work=$(mktemp -d /tmp/kvsim-install.XXXXXX)
trap 'rm -rf "$work"' EXIT
prefix=$work/root
fail() { echo "install test: $*" >&2; exit 1; }

case $mode in
  --deb)
    deb=$(cd "$(dirname "$what")" && pwd)/$(basename "$what")
    version=$(sed -n 's/^project(kvsim VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
    [[ $(basename "$deb") == "kvsim_${version}_amd64.deb" ]] || fail "package named $(basename "$deb"), not kvsim_${version}_amd64.deb"
    depends=$(dpkg-deb -f "$deb" Depends)
    echo "Depends: $depends"
    for lib in libyaml-cpp libsqlite3 libcurl libqt6charts6 python3 libstdc++6; do
      [[ $depends == *"$lib"* ]] || fail "the package does not declare a dependency on $lib"
    done
    # Every declared dependency resolves on this system (dry run: nothing is installed).
    if [[ $(id -u) == 0 ]]; then apt-get install -s -q "$deb" > "$work/apt.log" || { cat "$work/apt.log"; fail "apt cannot install the package"; }; fi
    dpkg -x "$deb" "$prefix"
    usr=$prefix/usr
    ;;
  --build-dir)
    cmake --install "$what" --prefix "$prefix/usr" > "$work/install.log" || { cat "$work/install.log"; fail "cmake --install failed"; }
    usr=$prefix/usr
    ;;
  *) fail "unknown mode $mode" ;;
esac

for f in bin/kvsim bin/kvsim-gui share/kvsim/scenarios/catalog/gpus.yaml share/kvsim/scenarios/seed/4x4090-nvme-net.yaml \
         share/kvsim/models/profiles/rtx4090-llama-3.1-8b-vllm0.19.yaml include/kvsim/sim/cluster/simulation.hpp \
         include/kvsim/sim/core/version.hpp lib/cmake/kvsim/kvsimConfig.cmake lib/python3/dist-packages/kvsim/__init__.py; do
  [[ -e $usr/$f ]] || fail "not installed: $f"
done

run=$work/elsewhere
mkdir -p "$run"
cd "$run"
unset KVSIM_CATALOG_DIR
kvsim=$usr/bin/kvsim
# The catalog is the installed one, found from where the program lies.
"$kvsim" catalog > catalog.txt
grep -q "^GPUs ($usr/share/kvsim/scenarios/catalog/gpus.yaml)" catalog.txt || { head -3 catalog.txt; fail "kvsim catalog did not use the installed catalog"; }
grep -q '^rtx4090 ' catalog.txt || fail "kvsim catalog does not list rtx4090"
echo "kvsim catalog: $(grep -c . catalog.txt) lines from $usr/share/kvsim/scenarios/catalog"

seed=$usr/share/kvsim/scenarios/seed/4x4090-nvme-net.yaml
"$kvsim" run "$seed" --format json > run.json
rps=$(python3 -c 'import json,sys; s=json.load(open("run.json")); print(s["requests_per_sec"])')
python3 -c "import sys; sys.exit(0 if float('$rps') > 0 else 1)" || fail "kvsim run: requests/s $rps"
echo "kvsim run (installed seed scenario): $rps requests/s"

# The installed Python module, not a build tree's, in Debian's python3 (the one it is built for).
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3
env PYTHONPATH=$usr/lib/python3/dist-packages ${KVSIM_PY_PRELOAD:+LD_PRELOAD=$KVSIM_PY_PRELOAD ASAN_OPTIONS=detect_leaks=0} "$py" - "$seed" "$usr" <<'PY'
import sys
import kvsim
seed, usr = sys.argv[1], sys.argv[2]
assert kvsim.__file__.startswith(usr), kvsim.__file__
summary, requests = kvsim.run(seed, set={"workload.generation.num_conversations": 48, "workload.clients.num_clients": 8, "workload.clients.max_active_conversations": 24})
assert summary["requests_per_sec"] > 0, summary
assert "rtx4090" in kvsim.catalog()["gpus"]
print(f"python3 import kvsim ({kvsim.__file__}): {summary['requests_per_sec']:.3f} requests/s, {len(requests)} requests")
PY

# A C++ program built against the installed package.
cmake -S "$src/tests/install/consumer" -B consumer -DCMAKE_PREFIX_PATH="$usr" -DCMAKE_BUILD_TYPE=Release > consumer-configure.log ||
  { cat consumer-configure.log; fail "find_package(kvsim) failed"; }
cmake --build consumer -j2 > consumer-build.log 2>&1 || { tail -40 consumer-build.log; fail "the find_package(kvsim) program did not build"; }
./consumer/consumer "$seed" workload.generation.num_conversations=48 workload.clients.num_clients=8 workload.clients.max_active_conversations=24 | tee consumer.txt
grep -q 'requests/s' consumer.txt || fail "the find_package(kvsim) program printed no result"
echo "install test: passed ($mode)"
