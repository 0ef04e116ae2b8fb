# Sourced by scripts that find results/<gpu>/: gpu_slug BIN prints the folder name of the GPU
# that the fp2bench binary BIN runs on, as `fp2bench reproduce` names it ("NVIDIA H200" ->
# "h200"), and nothing (status 1) without a GPU.
gpu_slug() {
  local name
  name=$("$1" info 2>/dev/null | sed -n 's/^  name *//p' | head -1)
  [ -n "$name" ] || return 1
  echo "${name##* }" | tr 'A-Z' 'a-z' | tr -c 'a-z0-9\n' '-'
}
