# Shared by smoke_test.sh and saved_state_test.sh (sourced, not run): a scratch folder removed
# at exit with the server, the model (generated unless given), and start_server.
#   source "$here/test_lib.sh"; use_model "${1:-}" "${2:-}" LAYERS HIDDEN FFN; start_server ARGS...
work="$(mktemp -d)"
server_pid=""
# shellcheck disable=SC2317  # invoked by the EXIT trap
stop_server() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  server_pid=""
}
# shellcheck disable=SC2317  # invoked by the EXIT trap
cleanup() {
  stop_server
  rm -rf "$work"
}
trap cleanup EXIT

# use_model FLAG PATH LAYERS HIDDEN FFN: sets model to PATH when FLAG is --model, else generates
# a small Llama-architecture model of that shape (after installing the engine).
use_model() {
  "$here/install.sh"
  model=""
  if [ "$1" = "--model" ]; then model="$2"; return; fi
  model="$work/tiny.gguf"
  python3 "$here/make_gguf.py" "$model" --layers "$3" --hidden "$4" --ffn "$5" --heads 4 --kv-heads 2 \
    --ctx 2048 2>/dev/null
}

# start_server ARGS...: starts server.mjs on the model with ARGS (one llama.cpp thread unless
# SMOKE_THREADS says otherwise: robust when other processes share the cores, README.md) and waits
# for its address; sets server_pid and url.
start_server() {
  : >"$work/server.out"
  node "$here/server.mjs" --model "$model" --port 0 --threads "${SMOKE_THREADS:-1}" "$@" \
    >"$work/server.out" 2>"$work/server.err" &
  server_pid=$!
  url=""
  for _ in $(seq 1 240); do
    url="$(sed -n 's/^listening on //p' "$work/server.out")"
    [ -n "$url" ] && break
    kill -0 "$server_pid" 2>/dev/null || { echo "FAIL: server exited"; cat "$work/server.err"; exit 1; }
    sleep 0.25
  done
  [ -n "$url" ] || { echo "FAIL: server did not print its address within 60 s"; cat "$work/server.err"; exit 1; }
}
