/*
 * newlib's system calls over Arm semihosting, for Cortex-M under QEMU.
 *
 * Files are the host's (QEMU -semihosting-config target=native: paths are
 * relative to QEMU's working directory); descriptors 0, 1 and 2 are the
 * semihosting console.  The heap runs from the end of .bss up to the stack
 * limit.  exit() ends in tvmd_fw_exit (cortexm_startup.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "cortexm_semihost.h"

#define TVMD_FW_MAX_FILES 16
#define TVMD_FW_MAX_ARGS 32
#define TVMD_FW_CMDLINE_BYTES 1024

struct tvmd_fw_file {
  int32_t handle; /* semihosting handle; -1 when the descriptor is free */
  uint32_t pos;   /* semihosting SYS_SEEK is absolute: the position is kept here */
};

static struct tvmd_fw_file tvmd_fw_files[TVMD_FW_MAX_FILES];
static int tvmd_fw_files_ready;
static int32_t tvmd_fw_err_handle = -1;

extern char __heap_start__[];
extern char __stack_limit__[];

__attribute__((noreturn)) void tvmd_fw_exit(int status);
int tvmd_fw_args(char ***argv);
int _open(const char *path, int flags, ...);
int _close(int fd);
int _read(int fd, void *buf, size_t len);
int _write(int fd, const void *buf, size_t len);
off_t _lseek(int fd, off_t offset, int whence);
int _fstat(int fd, struct stat *st);
int _isatty(int fd);
void *_sbrk(ptrdiff_t increment);
__attribute__((noreturn)) void _exit(int status);
int _kill(int pid, int sig);
int _getpid(void);
int _unlink(const char *path);

static int32_t tvmd_fw_open_handle(const char *path, uint32_t mode) {
  uint32_t length = 0;
  while (path[length] != '\0') {
    ++length;
  }
  const uint32_t block[3] = {(uint32_t)(uintptr_t)path, mode, length};
  return tvmd_sh_call(TVMD_SH_SYS_OPEN, block);
}

int32_t tvmd_fw_console_err(void) {
  if (tvmd_fw_err_handle < 0) {
    tvmd_fw_err_handle = tvmd_fw_open_handle(":tt", TVMD_SH_MODE_TT_ERR);
  }
  return tvmd_fw_err_handle;
}

void tvmd_fw_write_str(int32_t handle, const char *s) {
  uint32_t length = 0;
  while (s[length] != '\0') {
    ++length;
  }
  const uint32_t block[3] = {(uint32_t)handle, (uint32_t)(uintptr_t)s, length};
  (void)tvmd_sh_call(TVMD_SH_SYS_WRITE, block);
}

static void tvmd_fw_files_init(void) {
  if (tvmd_fw_files_ready) {
    return;
  }
  for (int i = 0; i < TVMD_FW_MAX_FILES; ++i) {
    tvmd_fw_files[i].handle = -1;
    tvmd_fw_files[i].pos = 0;
  }
  tvmd_fw_files[0].handle = tvmd_fw_open_handle(":tt", TVMD_SH_MODE_TT_IN);
  tvmd_fw_files[1].handle = tvmd_fw_open_handle(":tt", TVMD_SH_MODE_TT_OUT);
  tvmd_fw_files[2].handle = tvmd_fw_console_err();
  tvmd_fw_files_ready = 1;
}

static struct tvmd_fw_file *tvmd_fw_file(int fd) {
  tvmd_fw_files_init();
  if (fd < 0 || fd >= TVMD_FW_MAX_FILES || tvmd_fw_files[fd].handle < 0) {
    errno = EBADF;
    return NULL;
  }
  return &tvmd_fw_files[fd];
}

/* argc/argv from the semihosting command line (QEMU: the -semihosting-config arg= values, space-separated). */
int tvmd_fw_args(char ***argv) {
  static char cmdline[TVMD_FW_CMDLINE_BYTES];
  static char *args[TVMD_FW_MAX_ARGS + 1];
  uint32_t block[2] = {(uint32_t)(uintptr_t)cmdline, sizeof(cmdline) - 1};
  int argc = 0;
  if (tvmd_sh_call(TVMD_SH_SYS_GET_CMDLINE, block) == 0) {
    cmdline[block[1] < sizeof(cmdline) ? block[1] : sizeof(cmdline) - 1] = '\0';
    char *p = cmdline;
    while (*p != '\0' && argc < TVMD_FW_MAX_ARGS) {
      while (*p == ' ') {
        *p++ = '\0';
      }
      if (*p == '\0') {
        break;
      }
      args[argc++] = p;
      while (*p != '\0' && *p != ' ') {
        ++p;
      }
    }
  }
  if (argc == 0) {
    args[argc++] = "firmware";
  }
  args[argc] = NULL;
  *argv = args;
  return argc;
}

int _open(const char *path, int flags, ...) {
  tvmd_fw_files_init();
  int fd = 3;
  while (fd < TVMD_FW_MAX_FILES && tvmd_fw_files[fd].handle >= 0) {
    ++fd;
  }
  if (fd == TVMD_FW_MAX_FILES) {
    errno = EMFILE;
    return -1;
  }
  uint32_t mode;
  int access = flags & O_ACCMODE;
  if (flags & O_APPEND) {
    mode = access == O_RDWR ? TVMD_SH_MODE_APB : TVMD_SH_MODE_AB;
  } else if (flags & O_TRUNC) {
    mode = access == O_RDWR ? TVMD_SH_MODE_WPB : TVMD_SH_MODE_WB;
  } else if (access == O_RDONLY) {
    mode = TVMD_SH_MODE_RB;
  } else if (flags & O_CREAT) {
    mode = access == O_RDWR ? TVMD_SH_MODE_WPB : TVMD_SH_MODE_WB;
  } else {
    mode = TVMD_SH_MODE_RPB;
  }
  int32_t handle = tvmd_fw_open_handle(path, mode);
  if (handle < 0) {
    errno = ENOENT;
    return -1;
  }
  tvmd_fw_files[fd].handle = handle;
  tvmd_fw_files[fd].pos = 0;
  return fd;
}

int _close(int fd) {
  struct tvmd_fw_file *f = tvmd_fw_file(fd);
  if (f == NULL) {
    return -1;
  }
  if (fd > 2) {
    const uint32_t block[1] = {(uint32_t)f->handle};
    (void)tvmd_sh_call(TVMD_SH_SYS_CLOSE, block);
    f->handle = -1;
  }
  return 0;
}

int _read(int fd, void *buf, size_t len) {
  struct tvmd_fw_file *f = tvmd_fw_file(fd);
  if (f == NULL) {
    return -1;
  }
  const uint32_t block[3] = {(uint32_t)f->handle, (uint32_t)(uintptr_t)buf, (uint32_t)len};
  int32_t not_read = tvmd_sh_call(TVMD_SH_SYS_READ, block);
  if (not_read < 0 || (uint32_t)not_read > len) {
    errno = EIO;
    return -1;
  }
  f->pos += (uint32_t)len - (uint32_t)not_read;
  return (int)(len - (size_t)not_read);
}

int _write(int fd, const void *buf, size_t len) {
  struct tvmd_fw_file *f = tvmd_fw_file(fd);
  if (f == NULL) {
    return -1;
  }
  const uint32_t block[3] = {(uint32_t)f->handle, (uint32_t)(uintptr_t)buf, (uint32_t)len};
  int32_t not_written = tvmd_sh_call(TVMD_SH_SYS_WRITE, block);
  if (not_written < 0 || (uint32_t)not_written > len) {
    errno = EIO;
    return -1;
  }
  f->pos += (uint32_t)len - (uint32_t)not_written;
  return (int)(len - (size_t)not_written);
}

off_t _lseek(int fd, off_t offset, int whence) {
  struct tvmd_fw_file *f = tvmd_fw_file(fd);
  if (f == NULL) {
    return -1;
  }
  const uint32_t handle_block[1] = {(uint32_t)f->handle};
  int32_t base = 0;
  if (whence == SEEK_CUR) {
    base = (int32_t)f->pos;
  } else if (whence == SEEK_END) {
    base = tvmd_sh_call(TVMD_SH_SYS_FLEN, handle_block);
    if (base < 0) {
      errno = ESPIPE;
      return -1;
    }
  } else if (whence != SEEK_SET) {
    errno = EINVAL;
    return -1;
  }
  int32_t target = base + (int32_t)offset;
  if (target < 0) {
    errno = EINVAL;
    return -1;
  }
  const uint32_t block[2] = {(uint32_t)f->handle, (uint32_t)target};
  if (tvmd_sh_call(TVMD_SH_SYS_SEEK, block) != 0) {
    errno = ESPIPE;
    return -1;
  }
  f->pos = (uint32_t)target;
  return (off_t)target;
}

int _isatty(int fd) {
  struct tvmd_fw_file *f = tvmd_fw_file(fd);
  if (f == NULL) {
    return 0;
  }
  const uint32_t block[1] = {(uint32_t)f->handle};
  return tvmd_sh_call(TVMD_SH_SYS_ISTTY, block) == 1;
}

int _fstat(int fd, struct stat *st) {
  if (tvmd_fw_file(fd) == NULL) {
    return -1;
  }
  for (size_t i = 0; i < sizeof(*st); ++i) {
    ((char *)st)[i] = 0;
  }
  st->st_mode = _isatty(fd) ? S_IFCHR : S_IFREG;
  st->st_blksize = 512;
  return 0;
}

void *_sbrk(ptrdiff_t increment) {
  static char *brk = __heap_start__;
  if (increment > __stack_limit__ - brk || increment < __heap_start__ - brk) {
    errno = ENOMEM;
    return (void *)-1;
  }
  char *previous = brk;
  brk += increment;
  return previous;
}

void _exit(int status) { tvmd_fw_exit(status); }

int _kill(int pid, int sig) {
  (void)pid;
  (void)sig;
  tvmd_fw_exit(128 + sig);
}

int _getpid(void) { return 1; }

int _unlink(const char *path) {
  uint32_t length = 0;
  while (path[length] != '\0') {
    ++length;
  }
  const uint32_t block[2] = {(uint32_t)(uintptr_t)path, length};
  if (tvmd_sh_call(TVMD_SH_SYS_REMOVE, block) != 0) {
    errno = ENOENT;
    return -1;
  }
  return 0;
}
