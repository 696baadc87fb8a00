/*
 * A QEMU TCG plugin that counts the guest instructions a run executes.
 *
 * Built on demand with the host's cc (tvmdevice.firmware.icount) and loaded
 * with  -plugin PATH,out=FILE[,begin=ADDR,end=ADDR].  Every translated
 * instruction gets an inline 64-bit add of 1 to a counter, so the count is
 * exact and does not depend on how QEMU splits, chains or re-translates
 * blocks (a conditional instruction whose condition fails still counts:
 * it was issued).  When begin/end are given (the addresses of tvmd_fw_region_begin
 * and tvmd_fw_region_end), the instructions executed from each begin to the
 * following end are added up apart.
 *
 * Profiling marks (tvmdevice_fw.h's TVMD_FW_MARK): given mark=, zero=, one=
 * and stop= (the addresses of tvmd_fw_mark, tvmd_fw_mark_zero, _one and
 * _stop), each mark run inside the first region is recorded in order: its id,
 * spelled by the zero/one calls between mark and stop, and the region's
 * instructions when it began, less those run inside earlier marks (from
 * tvmd_fw_mark's first instruction up to tvmd_fw_mark_stop's), which are
 * summed apart as mark_instructions.  At exit the plugin writes
 *   instructions=N region_instructions=M regions=K mark_instructions=O marks=ID:AT,ID:AT,...
 * to FILE.
 *
 * QEMU's plugin API is a C ABI (QEMU_PLUGIN_VERSION 1, unchanged through
 * QEMU 7.2), and Debian ships no qemu-plugin.h: the few declarations this
 * plugin uses are written out here.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the part of QEMU's plugin API this plugin uses ------------------------------------ */

#define TVMD_QEMU_PLUGIN_EXPORT __attribute__((visibility("default")))

typedef uint64_t qemu_plugin_id_t;

typedef struct {
  const char *target_name;
  struct {
    int min;
    int cur;
  } version;
  _Bool system_emulation;
  union {
    struct {
      int smp_vcpus;
      int max_vcpus;
    } system;
  };
} qemu_info_t;

struct qemu_plugin_tb;
struct qemu_plugin_insn;

enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_CB_R_REGS, QEMU_PLUGIN_CB_RW_REGS };
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };

typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn, qemu_plugin_vcpu_udata_cb_t cb,
                                            enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn *insn, enum qemu_plugin_op op, void *ptr,
                                                uint64_t imm);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
void qemu_plugin_outs(const char *string);

/* ---- the plugin ---------------------------------------------------------------------- */

TVMD_QEMU_PLUGIN_EXPORT int qemu_plugin_version = 1;

static uint64_t count;             /* every instruction executed */
static uint64_t region_total;      /* instructions inside finished regions */
static uint64_t region_start;      /* count when the open region began */
static uint64_t regions;           /* regions finished */
static int region_open;
static uint64_t begin_addr = UINT64_MAX;
static uint64_t end_addr = UINT64_MAX;
static char out_path[4096];

/* Profiling marks: the functions that spell them, the marks of the first region so far. */
static uint64_t mark_addr = UINT64_MAX, zero_addr = UINT64_MAX, one_addr = UINT64_MAX, stop_addr = UINT64_MAX;
static int mark_open;           /* between tvmd_fw_mark and tvmd_fw_mark_stop, inside the first region */
static uint64_t mark_entry;     /* count when the open mark began */
static uint32_t mark_bits;      /* the open mark's id so far */
static uint64_t mark_total;     /* instructions inside finished marks */
static uint32_t *mark_ids;      /* every finished mark's id, in order */
static uint64_t *mark_at;       /* and the region's instructions outside marks when it began */
static size_t marks, marks_capacity;
static int marks_lost;

static void on_mark(unsigned int vcpu_index, void *userdata) {
  (void)vcpu_index;
  (void)userdata;
  mark_open = region_open && regions == 0;
  mark_entry = count;
  mark_bits = 0;
}

static void on_bit(unsigned int vcpu_index, void *userdata) {
  (void)vcpu_index;
  mark_bits = (mark_bits << 1) | (userdata != NULL ? 1u : 0u);
}

static void on_stop(unsigned int vcpu_index, void *userdata) {
  (void)vcpu_index;
  (void)userdata;
  if (!mark_open) {
    return;
  }
  mark_open = 0;
  if (marks == marks_capacity) {
    size_t capacity = marks_capacity ? 2 * marks_capacity : 1024;
    uint32_t *ids = realloc(mark_ids, capacity * sizeof *ids);
    if (ids != NULL) mark_ids = ids;
    uint64_t *at = realloc(mark_at, capacity * sizeof *at);
    if (at != NULL) mark_at = at;
    if (ids == NULL || at == NULL) {
      marks_lost = 1;
      return;
    }
    marks_capacity = capacity;
  }
  mark_ids[marks] = mark_bits;
  mark_at[marks] = mark_entry - region_start - mark_total;
  ++marks;
  mark_total += count - mark_entry;
}

static void on_begin(unsigned int vcpu_index, void *userdata) {
  (void)vcpu_index;
  (void)userdata;
  region_start = count;
  region_open = 1;
}

static void on_end(unsigned int vcpu_index, void *userdata) {
  (void)vcpu_index;
  (void)userdata;
  if (region_open) {
    region_total += count - region_start;
    regions += 1;
    region_open = 0;
  }
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
  (void)id;
  size_t n = qemu_plugin_tb_n_insns(tb);
  for (size_t i = 0; i < n; ++i) {
    struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
    uint64_t vaddr = qemu_plugin_insn_vaddr(insn);
    /* QEMU runs an instruction's callbacks before its inline ops: a region counts from the first
     * instruction of tvmd_fw_region_begin up to, not including, the first of tvmd_fw_region_end. */
    if (vaddr == begin_addr) {
      qemu_plugin_register_vcpu_insn_exec_cb(insn, on_begin, QEMU_PLUGIN_CB_NO_REGS, NULL);
    } else if (vaddr == end_addr) {
      qemu_plugin_register_vcpu_insn_exec_cb(insn, on_end, QEMU_PLUGIN_CB_NO_REGS, NULL);
    } else if (vaddr == mark_addr) {
      qemu_plugin_register_vcpu_insn_exec_cb(insn, on_mark, QEMU_PLUGIN_CB_NO_REGS, NULL);
    } else if (vaddr == zero_addr || vaddr == one_addr) {
      qemu_plugin_register_vcpu_insn_exec_cb(insn, on_bit, QEMU_PLUGIN_CB_NO_REGS,
                                             vaddr == one_addr ? (void *)&one_addr : NULL);
    } else if (vaddr == stop_addr) {
      qemu_plugin_register_vcpu_insn_exec_cb(insn, on_stop, QEMU_PLUGIN_CB_NO_REGS, NULL);
    }
    qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, &count, 1);
  }
}

static void on_qemu_exit(qemu_plugin_id_t id, void *userdata) {
  (void)id;
  (void)userdata;
  FILE *f = fopen(out_path, "w");
  if (f == NULL) {
    qemu_plugin_outs("tvmdevice icount plugin: cannot write its output file\n");
    return;
  }
  fprintf(f, "instructions=%" PRIu64 " region_instructions=%" PRIu64 " regions=%" PRIu64 " marks_lost=%d",
          count, region_total, regions, marks_lost);
  fprintf(f, " mark_instructions=%" PRIu64 " marks=", mark_total);
  for (size_t i = 0; i < marks; ++i) {
    fprintf(f, "%s%" PRIu32 ":%" PRIu64, i ? "," : "", mark_ids[i], mark_at[i]);
  }
  fprintf(f, "\n");
  fclose(f);
}

static int parse_address(const char *text, uint64_t *out) {
  char *end;
  unsigned long long value = strtoull(text, &end, 0);
  if (*text == '\0' || *end != '\0') {
    return -1;
  }
  *out = (uint64_t)value;
  return 0;
}

TVMD_QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
                                                char **argv) {
  (void)info;
  for (int i = 0; i < argc; ++i) {
    const char *arg = argv[i];
    if (strncmp(arg, "out=", 4) == 0 && strlen(arg + 4) < sizeof(out_path)) {
      strcpy(out_path, arg + 4);
    } else if (strncmp(arg, "begin=", 6) == 0 && parse_address(arg + 6, &begin_addr) == 0) {
    } else if (strncmp(arg, "end=", 4) == 0 && parse_address(arg + 4, &end_addr) == 0) {
    } else if (strncmp(arg, "mark=", 5) == 0 && parse_address(arg + 5, &mark_addr) == 0) {
    } else if (strncmp(arg, "zero=", 5) == 0 && parse_address(arg + 5, &zero_addr) == 0) {
    } else if (strncmp(arg, "one=", 4) == 0 && parse_address(arg + 4, &one_addr) == 0) {
    } else if (strncmp(arg, "stop=", 5) == 0 && parse_address(arg + 5, &stop_addr) == 0) {
    } else {
      fprintf(stderr, "tvmdevice icount plugin: bad argument '%s' (expected out=FILE, begin=, end=, mark=, zero=, one=, stop=ADDR)\n", arg);
      return -1;
    }
  }
  if (out_path[0] == '\0') {
    fprintf(stderr, "tvmdevice icount plugin: out=FILE is required\n");
    return -1;
  }
  qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
  qemu_plugin_register_atexit_cb(id, on_qemu_exit, NULL);
  return 0;
}
