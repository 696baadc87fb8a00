/* Profiling marks: a region holding two marked loops (the second three times as long) and an unmarked
 * gap, the loop lengths from argv[1] (a second argument adds mark 0xBEEF); marks outside the region must not be recorded. */
#include <stdlib.h>

#include "tvmdevice_fw.h"

static volatile unsigned sink;

static void spin(unsigned n) {
  for (unsigned i = 0; i < n; ++i) sink += i;
}

int main(int argc, char** argv) {
  unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 100u;
  TVMD_FW_MARK(9); /* before the region: not recorded */
  tvmd_fw_region_begin();
  TVMD_FW_MARK(0);
  spin(n);
  TVMD_FW_MARK(1);
  spin(n / 2);
  if (argc > 2) TVMD_FW_MARK(0xBEEF);
  TVMD_FW_MARK(2);
  spin(3 * n);
  TVMD_FW_MARK(3);
  tvmd_fw_region_end();
  TVMD_FW_MARK(7); /* after it: not recorded */
  return 0;
}
