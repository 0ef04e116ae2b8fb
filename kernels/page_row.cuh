/* K and V in pages (fp2_kv_pages): where a key's row lies. The page sizes the library takes
   (fp2_check_pages) are powers of two, so that a key's page and its row in the page are a
   shift and a mask away. */
#pragma once

#include <stddef.h>

namespace fp2 {

/* log2 of a page size fp2_check_pages accepts. */
inline int page_shift(int page_size) {
  int shift = 0;
  while ((1 << shift) < page_size) shift++;
  return shift;
}

/* The row of key t of a request whose pages are pages[0 ..] (its row of the page table), in
   the pages' [num_pages * page_size] rows. */
__device__ __forceinline__ size_t page_row(const int *pages, int shift, int t) {
  return ((size_t)pages[t >> shift] << shift) + (t & ((1 << shift) - 1));
}

}  // namespace fp2
