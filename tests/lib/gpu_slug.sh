# Sourced by scripts that find results/<gpu>/: gpu_slug BIN prints the folder name of the GPU
# that the fp2bench binary BIN runs on, as `fp2bench info` gives it (gpu_name_slug: "NVIDIA
# H200" -> "h200"), and nothing (status 1) without a GPU.
gpu_slug() {
  local slug
  slug=$("$1" info 2>/dev/null | sed -n 's|^  results *results/||p' | head -1)
  [ -n "$slug" ] || return 1
  echo "$slug"
}
