/* The building blocks of the Hopper attention kernel, one at a time, on fresh random
   integer-valued inputs whose products are exact in f32 (so every comparison is exact):
   1. TMA loads of a PackGQA query box (position x head) and of a key box, out-of-bounds
      rows included, land where the 128-byte swizzle and the packed-row order say;
   2. S = A B^T by wgmma m64n128k16 from shared memory (desc_kmajor), both warpgroups;
   3. O = P V by wgmma with P from registers (pack_a_fragments) and V read MN-major
      (desc_mnmajor);
   4. FP8: S = A B^T by e4m3 wgmma (k = 32) from shared memory, and O = P V with P packed by
      pack_a_fragments_e4m3 against V transposed with its keys in fp8_slot_key's order.
   When the whole kernel fails `fp2bench check --kernel sm90`, this test says which piece
   is wrong. Exits 77 without a GPU or on a GPU other than sm_90. */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "online_softmax.cuh"
#include "sm90_tile.cuh"
#include "tensor_map.h"

extern "C" {
#include "testing.h"
}

using namespace fp2;

#define CHECK_FP2(call)                                                                          \
  do {                                                                                           \
    if ((call) != FP2_OK) {                                                                      \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, fp2_error_message()); \
      exit(3);                                                                                   \
    }                                                                                            \
  } while (0)

constexpr int kD = 128;
constexpr int kSmemBytes = 2 * kTileBytes + 1024 + 64;

struct TileSmem {
  unsigned char a[kTileBytes];
  unsigned char b[kTileBytes];
  uint64_t full;
};

__device__ TileSmem &tile_smem() {
  extern __shared__ __align__(1024) unsigned char raw[];
  return *reinterpret_cast<TileSmem *>(align_1024(raw));
}

/* The tiles' barrier, initialised by one thread and seen by all. */
__device__ void init_barrier(uint64_t *bar) {
  if (threadIdx.x == 0) {
    mbarrier_init(bar, 1);
    fence_mbarrier_init();
  }
  __syncthreads();
}

/* Loads a 3-D box at (0 | 64, c1, c2) of each map into tiles a and b. */
__device__ void load_tiles(const CUtensorMap *ma, int a1, int a2, const CUtensorMap *mb, int b1, int b2) {
  TileSmem &sm = tile_smem();
  init_barrier(&sm.full);
  if (threadIdx.x == 0) {
    mbarrier_arrive_expect_tx(&sm.full, 2 * kTileBytes);
    tma_load_tile_3d(sm.a, ma, a1, a2, &sm.full);
    tma_load_tile_3d(sm.b, mb, b1, b2, &sm.full);
  }
  mbarrier_wait(&sm.full, 0);
}

__global__ void tma_dump_kernel(const __grid_constant__ CUtensorMap ma, int a1, int a2,
                                const __grid_constant__ CUtensorMap mb, int b1, int b2, uint4 *out) {
  load_tiles(&ma, a1, a2, &mb, b1, b2);
  const uint4 *src = reinterpret_cast<const uint4 *>(tile_smem().a); /* a and b are adjacent */
  for (int i = threadIdx.x; i < 2 * kTileBytes / 16; i += blockDim.x) out[i] = src[i];
}

/* Where thread-held accumulator element (nt, e) of warpgroup wg sits in the 128 x 128 tile. */
__device__ void acc_position(int nt, int e, int *row, int *col) {
  const int wg = threadIdx.x / 128, warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
  *row = wg * 64 + warp * 16 + lane / 4 + (e >> 1) * 8;
  *col = nt * 8 + (lane % 4) * 2 + (e & 1);
}

/* The warpgroups' 128 x 128 accumulator tile to a row-major global array, and back. */
__device__ void store_acc(const float (&acc)[16][4], float *out) {
  for (int nt = 0; nt < 16; nt++)
    for (int e = 0; e < 4; e++) {
      int row, col;
      acc_position(nt, e, &row, &col);
      out[row * 128 + col] = acc[nt][e];
    }
}
__device__ void load_acc(float (&acc)[16][4], const float *in) {
  for (int nt = 0; nt < 16; nt++)
    for (int e = 0; e < 4; e++) {
      int row, col;
      acc_position(nt, e, &row, &col);
      acc[nt][e] = in[row * 128 + col];
    }
}

__global__ void wgmma_ss_kernel(const __grid_constant__ CUtensorMap ma, int a1, int a2,
                                const __grid_constant__ CUtensorMap mb, int b1, int b2, float *s_out) {
  load_tiles(&ma, a1, a2, &mb, b1, b2);
  TileSmem &sm = tile_smem();
  const int wg = threadIdx.x / 128;
  float acc[16][4];
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < kD / 16; kk++) wgmma_m64n128k16_bf16_ss(acc, desc_kmajor(sm.a, wg * 64, kk), desc_kmajor(sm.b, 0, kk), kk > 0);
  wgmma_commit();
  wgmma_wait<0>();
  wgmma_hold(acc);
  store_acc(acc, s_out);
}

/* O = P V: P [128 x 128] from global into the accumulator layout, packed as the attention
   kernel packs probabilities; V is tile b (tile a is loaded and unused). */
__global__ void wgmma_rs_kernel(const __grid_constant__ CUtensorMap ma, int a1, int a2,
                                const __grid_constant__ CUtensorMap mb, int b1, int b2, const float *p_in,
                                float *o_out) {
  load_tiles(&ma, a1, a2, &mb, b1, b2);
  TileSmem &sm = tile_smem();
  float s[16][4], o[16][4] = {};
  load_acc(s, p_in);
  uint32_t pf[8][4];
  pack_a_fragments<16>(s, pf);
  wgmma_hold(o);
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < 8; kk++) wgmma_m64n128k16_bf16_rs_tb(o, pf[kk], desc_mnmajor(sm.b, kk));
  wgmma_commit();
  wgmma_wait<0>();
  wgmma_hold(o);
  wgmma_hold_a(pf);
  store_acc(o, o_out);
}

/* 4: three 128 x 128 e4m3 tiles by TMA (A, B and V transposed), then S = A B^T and, with P
   from global packed as the FP8 attention kernel packs it, O = P V. */
struct Fp8Smem {
  unsigned char a[kHalfBytes], b[kHalfBytes], vt[kHalfBytes];
  uint64_t full;
};

__global__ void wgmma_e4m3_kernel(const __grid_constant__ CUtensorMap ma, const __grid_constant__ CUtensorMap mb,
                                  const __grid_constant__ CUtensorMap mvt, const float *p_in, float *s_out,
                                  float *o_out) {
  extern __shared__ __align__(1024) unsigned char raw[];
  Fp8Smem &sm = *reinterpret_cast<Fp8Smem *>(align_1024(raw));
  init_barrier(&sm.full);
  if (threadIdx.x == 0) {
    mbarrier_arrive_expect_tx(&sm.full, 3 * kHalfBytes);
    tma_load_2d(sm.a, &ma, 0, 0, &sm.full);
    tma_load_2d(sm.b, &mb, 0, 0, &sm.full);
    tma_load_2d(sm.vt, &mvt, 0, 0, &sm.full);
  }
  mbarrier_wait(&sm.full, 0);
  const int wg = threadIdx.x / 128;
  float acc[16][4], o[16][4] = {}, pv[16][4];
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < 4; kk++) wgmma_m64n128k32_e4m3_ss(acc, desc_kmajor(sm.a, wg * 64, kk), desc_kmajor(sm.b, 0, kk), kk > 0);
  wgmma_commit();
  wgmma_wait<0>();
  wgmma_hold(acc);
  store_acc(acc, s_out);
  load_acc(pv, p_in);
  uint32_t pf[4][4];
  pack_a_fragments_e4m3<16>(pv, pf);
  wgmma_hold(o);
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < 4; kk++) wgmma_m64n128k32_e4m3_rs(o, pf[kk], desc_kmajor(sm.vt, 0, kk));
  wgmma_commit();
  wgmma_wait<0>();
  wgmma_hold(o);
  wgmma_hold_a(pf);
  store_acc(o, o_out);
}

/* ---- host ---- */

static uint64_t rng_state;
static int rand_int(int lo, int hi) { /* uniform in [lo, hi] */
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return lo + (int)((rng_state >> 33) % (uint64_t)(hi - lo + 1));
}

static uint16_t bf16_of_int(int v) { /* exact for |v| <= 256 */
  float f = (float)v;
  uint32_t bits;
  memcpy(&bits, &f, 4);
  return (uint16_t)(bits >> 16);
}

/* A [npos, heads, 128] bf16 tensor of random integers in [-lim, lim], host values kept. */
struct Tensor3 {
  int npos, heads;
  int *host;
  uint16_t *dev;
};

static Tensor3 tensor3(int npos, int heads, int lim) {
  Tensor3 t = {npos, heads, (int *)malloc(sizeof(int) * (size_t)npos * heads * kD), NULL};
  size_t n = (size_t)npos * heads * kD;
  uint16_t *bits = (uint16_t *)malloc(2 * n);
  for (size_t i = 0; i < n; i++) {
    t.host[i] = rand_int(-lim, lim);
    bits[i] = bf16_of_int(t.host[i]);
  }
  CHECK_CUDA(cudaMalloc(&t.dev, 2 * n));
  CHECK_CUDA(cudaMemcpy(t.dev, bits, 2 * n, cudaMemcpyHostToDevice));
  free(bits);
  return t;
}

/* Value at (pos, head, d), 0 outside the tensor (TMA's fill). */
static int at(const Tensor3 &t, int pos, int head, int d) {
  if (pos < 0 || pos >= t.npos || head < 0 || head >= t.heads) return 0;
  return t.host[((size_t)pos * t.heads + head) * kD + d];
}

/* A map with box 64 x box_heads x (128 / box_heads) rows, as the kernel's Q (and, with
   box_heads 1, K and V) maps are built. */
static CUtensorMap map3(const Tensor3 &t, int box_heads) {
  CUtensorMap m;
  const cuuint64_t dims[3] = {kD, (cuuint64_t)t.heads, (cuuint64_t)t.npos};
  const cuuint64_t strides[2] = {kD * 2, (cuuint64_t)kD * 2 * t.heads};
  const cuuint32_t box[3] = {64, (cuuint32_t)box_heads, (cuuint32_t)(128 / box_heads)};
  CHECK_FP2(fp2_tensor_map_sw128(&m, 2, t.dev, 3, dims, strides, box));
  return m;
}

/* Tile row r of a box at (head0, pos0) with box_heads heads: position pos0 + r / g, head
   head0 + r % g; its element d sits at this byte offset of the tile (128-byte swizzle). */
static size_t swizzled_offset(int r, int d) {
  const int half = d / 64, c = d % 64;
  return (size_t)half * kHalfBytes + (size_t)r * 128 + (size_t)(((c / 8) ^ (r % 8)) * 16) + (size_t)(c % 8) * 2;
}

static void test_tma(const Tensor3 &q, const Tensor3 &k, int g, int head0, int pos0, int kpos0) {
  CUtensorMap mq = map3(q, g), mk = map3(k, 1);
  uint4 *out;
  CHECK_CUDA(cudaMalloc(&out, 2 * kTileBytes));
  CHECK_CUDA(cudaMemset(out, 0x7f, 2 * kTileBytes)); /* poison: never a value of the inputs */
  tma_dump_kernel<<<1, 128, kSmemBytes>>>(mq, head0, pos0, mk, 0, kpos0, out);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  unsigned char *h = (unsigned char *)malloc(2 * kTileBytes);
  CHECK_CUDA(cudaMemcpy(h, out, 2 * kTileBytes, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int r = 0; r < 128; r++)
    for (int d = 0; d < kD; d++) {
      uint16_t got_q, got_k;
      memcpy(&got_q, h + swizzled_offset(r, d), 2);
      memcpy(&got_k, h + kTileBytes + swizzled_offset(r, d), 2);
      const uint16_t want_q = bf16_of_int(at(q, pos0 + r / g, head0 + r % g, d)), want_k = bf16_of_int(at(k, kpos0 + r, 0, d));
      if ((got_q != want_q || got_k != want_k) && bad++ < 5)
        fprintf(stderr, "tma g=%d: row %d col %d: q %04x (want %04x), k %04x (want %04x)\n", g, r, d, got_q, want_q,
                got_k, want_k);
    }
  EXPECT_MSG(bad == 0, "tma g=%d: %d elements misplaced", g, bad);
  free(h);
  CHECK_CUDA(cudaFree(out));
}

static void test_ss(const Tensor3 &q, const Tensor3 &k, int qpos0, int qhead, int kpos0, int khead) {
  CUtensorMap mq = map3(q, 1), mk = map3(k, 1);
  float *s;
  CHECK_CUDA(cudaMalloc(&s, sizeof(float) * 128 * 128));
  CHECK_CUDA(cudaMemset(s, 0xff, sizeof(float) * 128 * 128)); /* NaN */
  wgmma_ss_kernel<<<1, 256, kSmemBytes>>>(mq, qhead, qpos0, mk, khead, kpos0, s);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  float *h = (float *)malloc(sizeof(float) * 128 * 128);
  CHECK_CUDA(cudaMemcpy(h, s, sizeof(float) * 128 * 128, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < 128; i++)
    for (int j = 0; j < 128; j++) {
      long want = 0;
      for (int d = 0; d < kD; d++) want += (long)at(q, qpos0 + i, qhead, d) * at(k, kpos0 + j, khead, d);
      if (h[i * 128 + j] != (float)want && bad++ < 5)
        fprintf(stderr, "wgmma ss: S[%d][%d] = %g, want %ld\n", i, j, h[i * 128 + j], want);
    }
  EXPECT_MSG(bad == 0, "wgmma ss: %d of 16384 products wrong", bad);
  free(h);
  CHECK_CUDA(cudaFree(s));
}

static void test_rs(const Tensor3 &q, const Tensor3 &v, int vpos0, int vhead) {
  CUtensorMap mq = map3(q, 1), mv = map3(v, 1);
  int *p = (int *)malloc(sizeof(int) * 128 * 128);
  float *pf = (float *)malloc(sizeof(float) * 128 * 128);
  for (int i = 0; i < 128 * 128; i++) pf[i] = (float)(p[i] = rand_int(-4, 4));
  float *p_dev, *o;
  CHECK_CUDA(cudaMalloc(&p_dev, sizeof(float) * 128 * 128));
  CHECK_CUDA(cudaMalloc(&o, sizeof(float) * 128 * 128));
  CHECK_CUDA(cudaMemcpy(p_dev, pf, sizeof(float) * 128 * 128, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(o, 0xff, sizeof(float) * 128 * 128));
  wgmma_rs_kernel<<<1, 256, kSmemBytes>>>(mq, 0, 0, mv, vhead, vpos0, p_dev, o);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  float *h = (float *)malloc(sizeof(float) * 128 * 128);
  CHECK_CUDA(cudaMemcpy(h, o, sizeof(float) * 128 * 128, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < 128; i++)
    for (int d = 0; d < kD; d++) {
      long want = 0;
      for (int j = 0; j < 128; j++) want += (long)p[i * 128 + j] * at(v, vpos0 + j, vhead, d);
      if (h[i * 128 + d] != (float)want && bad++ < 5)
        fprintf(stderr, "wgmma rs: O[%d][%d] = %g, want %ld\n", i, d, h[i * 128 + d], want);
    }
  EXPECT_MSG(bad == 0, "wgmma rs (V MN-major): %d of 16384 outputs wrong", bad);
  free(h);
  free(p);
  free(pf);
  CHECK_CUDA(cudaFree(p_dev));
  CHECK_CUDA(cudaFree(o));
}

/* The e4m3 code of a small integer (|v| <= 15: exact with 3 mantissa bits). */
static uint8_t e4m3_of_int(int v) {
  if (v == 0) return 0;
  const int a = v < 0 ? -v : v;
  int e = 0;
  while ((a >> (e + 1)) != 0) e++;
  const int mant = ((a << 3) >> e) & 7;
  return (uint8_t)((v < 0 ? 0x80 : 0) | ((e + 7) << 3) | mant);
}

static CUtensorMap map_e4m3(const uint8_t *host, uint8_t **dev) {
  CHECK_CUDA(cudaMalloc(dev, 128 * 128));
  CHECK_CUDA(cudaMemcpy(*dev, host, 128 * 128, cudaMemcpyHostToDevice));
  CUtensorMap m;
  const cuuint64_t dims[2] = {128, 128}, strides[1] = {128};
  const cuuint32_t box[2] = {128, 128};
  CHECK_FP2(fp2_tensor_map_sw128(&m, 1, *dev, 2, dims, strides, box));
  return m;
}

/* S = A B^T and O = P V on random integers in [-4, 4] (every sum exact in f32); V goes to the
   GPU transposed, column c of its 128 rows holding key 32 (c / 32) + fp8_slot_key(c % 32). */
static void test_e4m3() {
  static int a[128][128], b[128][128], v[128][128], p[128][128];
  static uint8_t ha[128 * 128], hb[128 * 128], hvt[128 * 128];
  static float pf[128 * 128], s[128 * 128], o[128 * 128];
  for (int i = 0; i < 128; i++)
    for (int j = 0; j < 128; j++) {
      a[i][j] = rand_int(-4, 4), b[i][j] = rand_int(-4, 4), v[i][j] = rand_int(-4, 4), p[i][j] = rand_int(-4, 4);
      ha[i * 128 + j] = e4m3_of_int(a[i][j]);
      hb[i * 128 + j] = e4m3_of_int(b[i][j]);
      pf[i * 128 + j] = (float)p[i][j];
    }
  for (int d = 0; d < 128; d++)
    for (int c = 0; c < 128; c++) hvt[d * 128 + c] = e4m3_of_int(v[32 * (c / 32) + fp8_slot_key(c % 32)][d]);
  uint8_t *da, *db, *dvt;
  CUtensorMap ma = map_e4m3(ha, &da), mb = map_e4m3(hb, &db), mvt = map_e4m3(hvt, &dvt);
  float *p_dev, *s_dev, *o_dev;
  CHECK_CUDA(cudaMalloc(&p_dev, sizeof pf));
  CHECK_CUDA(cudaMalloc(&s_dev, sizeof s));
  CHECK_CUDA(cudaMalloc(&o_dev, sizeof o));
  CHECK_CUDA(cudaMemcpy(p_dev, pf, sizeof pf, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(s_dev, 0xff, sizeof s)); /* NaN */
  CHECK_CUDA(cudaMemset(o_dev, 0xff, sizeof o));
  const int smem = 3 * kHalfBytes + 1024 + 64;
  CHECK_CUDA(cudaFuncSetAttribute(wgmma_e4m3_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  wgmma_e4m3_kernel<<<1, 256, smem>>>(ma, mb, mvt, p_dev, s_dev, o_dev);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  CHECK_CUDA(cudaMemcpy(s, s_dev, sizeof s, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(o, o_dev, sizeof o, cudaMemcpyDeviceToHost));
  int bad_s = 0, bad_o = 0;
  for (int i = 0; i < 128; i++)
    for (int j = 0; j < 128; j++) {
      long want_s = 0, want_o = 0;
      for (int x = 0; x < 128; x++) {
        want_s += (long)a[i][x] * b[j][x];
        want_o += (long)p[i][x] * v[x][j];
      }
      if (s[i * 128 + j] != (float)want_s && bad_s++ < 5)
        fprintf(stderr, "wgmma e4m3 ss: S[%d][%d] = %g, want %ld\n", i, j, s[i * 128 + j], want_s);
      if (o[i * 128 + j] != (float)want_o && bad_o++ < 5)
        fprintf(stderr, "wgmma e4m3 rs: O[%d][%d] = %g, want %ld\n", i, j, o[i * 128 + j], want_o);
    }
  EXPECT_MSG(bad_s == 0, "wgmma e4m3 ss: %d of 16384 products wrong", bad_s);
  EXPECT_MSG(bad_o == 0, "wgmma e4m3 rs (V transposed, keys in slot order): %d of 16384 outputs wrong", bad_o);
  CHECK_CUDA(cudaFree(da));
  CHECK_CUDA(cudaFree(db));
  CHECK_CUDA(cudaFree(dvt));
  CHECK_CUDA(cudaFree(p_dev));
  CHECK_CUDA(cudaFree(s_dev));
  CHECK_CUDA(cudaFree(o_dev));
}

int main(void) {
  int n = 0, major = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    printf("gpu_tile_sm90: no GPU: skipped\n");
    return 77;
  }
  CHECK_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  if (major != 9) {
    printf("gpu_tile_sm90: not a Hopper GPU (sm_%d*): skipped\n", major);
    return 77;
  }
  rng_state = (uint64_t)time(NULL);
  printf("gpu_tile_sm90: seed %llu\n", (unsigned long long)rng_state);
  CHECK_CUDA(cudaFuncSetAttribute(tma_dump_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  CHECK_CUDA(cudaFuncSetAttribute(wgmma_ss_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  CHECK_CUDA(cudaFuncSetAttribute(wgmma_rs_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));

  /* Q [60 positions, 8 heads], K/V [200 positions, 2 heads]: boxes reach past the ends. */
  Tensor3 q = tensor3(60, 8, 125), k = tensor3(200, 2, 125), v = tensor3(200, 2, 125);
  test_tma(q, k, 4, 4, 41, 150); /* PackGQA g = 4: 32 positions x heads 4..7, 13 past the end */
  test_tma(q, k, 8, 0, 3, 0);    /* g = 8: 16 positions x all heads */
  test_tma(q, k, 1, 5, 0, 72);   /* g = 1 */
  Tensor3 wide = tensor3(300, 2, 125);
  test_ss(wide, k, 17, 1, 64, 0);
  test_ss(wide, k, 200, 0, 100, 1); /* both boxes partly out of bounds */
  test_rs(wide, v, 10, 1);
  test_rs(wide, v, 130, 0);         /* V rows past the end are zeros */
  test_e4m3();
  return test_result("gpu_tile_sm90");
}
