/*
 * platform-launcher: starts supervised job runs for the daemon, at the cost of one fork and one exec a run.
 *
 * Why native: the shell launcher's chain (a subshell, setsid, env, sh, run.sh, the job) costs ~4 ms a run on this
 * kind of machine, where GNU make pays under one for a trivial job. This program does what that chain does, in
 * the same places, so a run keeps every property the shell supervisor gave it (docs/decisions.md, "Speed, session 7"
 * and "Speed, session 13"):
 *
 *   launcher mode:   platform-launcher <workspace>
 *     Reads records from stdin, each `id NUL dir NUL cwd NUL stdin NUL timeout_ms NUL grace_ms NUL n NUL env_1 NUL ..
 *     env_n NUL m NUL arg_1 NUL .. arg_m NUL` (arg_1 is the program's absolute path; timeout_ms 0 is no timeout). A
 *     non-empty `stdin` is the job's config: the launcher makes the run's directory (file work off the daemon's
 *     event loop) and gives the config to the job as its stdin, a sealed memfd; empty, the daemon wrote the
 *     directory and a stdin.json. A run
 *     whose files cannot be written is answered `w <id> <errno>` (one that cannot be forked `f <id> <errno>`) and
 *     is not started. For each other it forks the job itself, which starts a session of its own (setsid: it outlives
 *     the daemon and a cancel reaches its whole group) and is exec'd with the job's environment (so
 *     /proc/<pid>/environ names the run, as the daemon's identity check expects), its stdin its config, its stdout
 *     and stderr the run's log files. The launcher is the supervisor of every run it started: once one ends it writes
 *     {"exit_code":N,"pid":P} to <dir>/status.json (128+n for a job killed by signal n, as a shell reports it) before the
 *     job is reaped, so a pid found gone always has its status beside it (<dir> as opened when the run started: a
 *     workspace moved meanwhile still gets it, in its new place), then writes `s <id> <pid> <ms>` once a run is
 *     forked and `x <id> <status> <ms>` once it ended (`<ms>`: when, epoch ms). It runs in a session of its own too, and at end of input it goes
 *     on until the last of its runs ended: the runs outlive the daemon, and a next daemon finds their status files.
 *     A malformed record (a daemon's bug) ends its input and news, not its supervision: it closes both (the daemon
 *     takes it for gone, reads its runs' ends from their status files and starts another) and goes on reaping.
 *     Runs past its slots are held: a control record (an empty id, then `slots NUL n NUL`; n empty for no limit)
 *     says how many of its runs may go at once, and a record that comes while they all go (or while others are held)
 *     waits, its files written, until one of its runs ends; then the oldest held starts at once, without the
 *     daemon's round trip between the end and the next start. `cancel NUL id NUL` drops a held run (`d <id> 0`); at
 *     the end of its input the held runs are dropped unstarted (the daemon's log has them queued, for the next one).
 *     It also keeps each run's timeout, with or without a daemon: timeout_ms after the fork it sends SIGTERM to the
 *     job's process group, grace_ms later SIGKILL (as the daemon does on a timeout), and the status it writes says
 *     "timed_out":true, so that whichever daemon reads it records the run timed out. No thread or process a run: the
 *     nearest deadline is its poll's timeout.
 *
 *   supervisor mode: platform-launcher --supervise <dir> [<timeout_ms> <grace_ms>]
 *     For a run whose environment or arguments a record cannot carry (more fields than the launcher parses): the
 *     daemon writes them to <dir>/exec.fields (`n NUL env_1 NUL .. env_n NUL m NUL arg_1 NUL .. arg_m NUL`, a record's
 *     tail) and hands the launcher a small record whose program is this mode. So the run counts in the launcher's
 *     slots, is held, dropped and timed out as any record is, and the launcher writes its status; this process, the
 *     run's session leader in the job's directory with the run's files as its stdio, forks and execs the job and exits
 *     with its status (128+n for a job killed by signal n). SIGTERM is caught (not ignored, which the job would
 *     inherit) so that a cancel reaching the whole group lets it outlive its job and report it. exec.fields holds the
 *     daemon's environment: removed once read. The job dies with it (PR_SET_PDEATHSIG): its pid is the run's. Gone
 *     its launcher, it writes the status itself, `timed_out` from the launcher's `timed-out` mark of its pid, and keeps
 *     the run's timeout (given again as its arguments) in the launcher's place: a SIGTERM that comes with that mark
 *     starts the grace, after which it sends the SIGKILL the dead launcher would have; its own deadline passed with
 *     no launcher, it times the job out as the launcher would (the mark, the line in stderr.log, SIGTERM, the grace).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Handlers first, then the mask: a signal pending while blocked is then delivered to its default, not to a handler
 * of the process this one was forked from. */
static void default_signals(void) {
  for (int s = 1; s < NSIG; s++) {
    if (s == SIGKILL || s == SIGSTOP) continue;
    signal(s, SIG_DFL);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
}

static int write_all(int fd, const char *buf, size_t len) {
  while (len > 0) {
    ssize_t n = write(fd, buf, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    buf += n;
    len -= (size_t)n;
  }
  return 0;
}

/* Epoch ms by the wall clock, as the daemon's Date.now(). */
static long long wall_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * One line of news; an id too long for the line is cut (the daemon's ids are short). It ends with when it happened
 * (epoch ms): a start or an end is recorded with it, not with when the daemon's next step took the news, which can be
 * long after (a held run started while the daemon was busy read 0 ms, started after its job had ended).
 */
static void news(const char *kind, const char *id, long value) {
  char line[512];
  int n = snprintf(line, sizeof line, "%s %.400s %ld %lld\n", kind, id, value, wall_ms());
  if (n < 0) return;
  if ((size_t)n >= sizeof line) n = (int)sizeof line - 1;
  write_all(1, line, (size_t)n);
}

static int exit_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

/*
 * A run's directory, held open (O_PATH) from its start by whoever writes its files while it goes on: the files of its
 * end then land in it wherever it is by then. A workspace moved (or renamed) while a run went on, its daemon stopped,
 * left the path the daemon gave naming nothing: the status written there was lost, the next daemon at the new path
 * found none, recorded the run lost and ran it again. One descriptor a running run, within the limit the launcher
 * inherits (node raises the daemon's soft limit to the hard one); -1 when it could not be opened: the path, as before.
 */
static int open_run_dir(const char *dir) { return open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC); }

/*
 * `name` of the run's directory for an *at call: by itself, relative to `dfd` (the directory held open), or where
 * there is none (dfd < 0) the whole path `dir/name` in buf, relative to nothing (`*at` AT_FDCWD). NULL when too long.
 */
static const char *run_file(int *at, int dfd, const char *dir, const char *name, char *buf, size_t size) {
  if (dfd >= 0) {
    *at = dfd;
    return name;
  }
  *at = AT_FDCWD;
  return (size_t)snprintf(buf, size, "%s/%s", dir, name) < size ? buf : NULL;
}

/*
 * The run's status, for a next daemon to read: written by whoever saw the job end, in its directory (`dfd`, else
 * `dir`). `pid` is the one the daemon recorded for the run, so that an attempt started later in the same directory
 * does not take this status for its own.
 *
 * Written to status.json.tmp and renamed: a write that fails (a disk with inodes but no blocks left) must not leave a
 * status.json that is empty or cut, which a daemon reads as no status and records the run lost. When the write fails,
 * the same text goes into status.link as a symlink's target instead: a short symlink is kept in its inode (ext4, and
 * tmpfs under 128 bytes), so it needs no block, and a next daemon reads the run's end from it (run-files.ts). With
 * neither (no inode either) the run's stderr.log says why, in what room its last block has.
 */
static void write_status(int dfd, const char *dir, int code, pid_t pid, int timed_out) {
  char path_buf[4096], tmp_buf[4096], link_buf[4096], log_buf[4096];
  int at;
  const char *path = run_file(&at, dfd, dir, "status.json", path_buf, sizeof path_buf);
  const char *tmp = run_file(&at, dfd, dir, "status.json.tmp", tmp_buf, sizeof tmp_buf);
  const char *link_path = run_file(&at, dfd, dir, "status.link", link_buf, sizeof link_buf);
  const char *log = run_file(&at, dfd, dir, "stderr.log", log_buf, sizeof log_buf);
  if (!path || !tmp || !link_path || !log) return;
  char line[96];
  int n = snprintf(line, sizeof line, "{\"exit_code\":%d,\"pid\":%ld%s}\n", code, (long)pid, timed_out ? ",\"timed_out\":true" : "");
  int fd = openat(at, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int e = fd < 0 ? errno : 0;
  if (fd >= 0) {
    if (write_all(fd, line, (size_t)n) != 0) e = errno;
    if (close(fd) != 0 && e == 0) e = errno;
    if (e == 0 && renameat(at, tmp, at, path) != 0) e = errno;
    if (e != 0) unlinkat(at, tmp, 0);
  }
  if (e == 0) return;
  line[n - 1] = '\0'; /* no newline in a link's target */
  unlinkat(at, link_path, 0);
  if (symlinkat(line, at, link_path) == 0) return;
  int err = openat(at, log, O_WRONLY | O_APPEND | O_CLOEXEC);
  if (err < 0) return;
  dprintf(err, "platform: the job ended (exit %d) but its status.json could not be written: %s\n", code, strerror(e));
  close(err);
}

/* Milliseconds of CLOCK_MONOTONIC: a timeout is a span from the start, which a change of the wall clock must not move. */
static long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A span in ms as the daemon writes it: decimal digits only (else -1: a malformed record), capped at ~30,000 years so
 * that a deadline computed from it cannot overflow. */
static long long parse_ms(const char *s) {
  const long long cap = 1000000000000000LL;
  long long v = 0;
  if (*s == '\0') return -1;
  for (; *s; s++) {
    if (*s < '0' || *s > '9') return -1;
    if (v < cap) v = v * 10 + (*s - '0');
  }
  return v < cap ? v : cap;
}

/* The line the daemon writes to a run's stderr.log when it times a run out, written by whoever does it (in `dfd`,
 * else `dir`). */
static void note_timeout(int dfd, const char *dir, long long timeout_ms, pid_t pid) {
  char buf[4096];
  int at;
  /* Which process timed out, for a --supervise that outlives this launcher and writes the status itself. */
  const char *path = run_file(&at, dfd, dir, "timed-out", buf, sizeof buf);
  if (path) {
    int mark = openat(at, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (mark >= 0) {
      dprintf(mark, "%ld\n", (long)pid);
      close(mark);
    }
  }
  path = run_file(&at, dfd, dir, "stderr.log", buf, sizeof buf);
  if (!path) return;
  int fd = openat(at, path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  char line[128];
  int n = timeout_ms % 1000 == 0
              ? snprintf(line, sizeof line, "platform: timed out after %lld s; killing the job's process group\n", timeout_ms / 1000)
              : snprintf(line, sizeof line, "platform: timed out after %lld ms; killing the job's process group\n", timeout_ms);
  if (n > 0 && (size_t)n < sizeof line) write_all(fd, line, (size_t)n);
  close(fd);
}

/*
 * The job's config as its stdin: a sealed memfd, not a file in the run's directory. A run's files cost an inode each,
 * and on an ext4 without a journal (this kind of VM) an inode costs O(inodes freed in the last minutes) of kernel CPU,
 * up to ~0.7 ms after a test suite's clean-up (docs/decisions.md, "Speed, session 27"). The run's view carries its
 * config, so the file told nobody anything. A kernel without memfd (before 3.17) gets the file, as before.
 */
static int config_stdin(const char *dir, const char *config) {
  size_t len = strlen(config);
#if defined(MFD_CLOEXEC) && defined(F_ADD_SEALS)
  int fd = memfd_create("stdin.json", MFD_CLOEXEC | MFD_ALLOW_SEALING);
#else
  /* A C library before memfd_create (glibc 2.27): the file, as a kernel without it gets. */
  int fd = -1;
#endif
  char path[4096];
  if (fd < 0) {
    snprintf(path, sizeof path, "%s/stdin.json", dir);
    fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return -1;
  }
  if (write_all(fd, config, len) != 0 || lseek(fd, 0, SEEK_SET) != 0) {
    close(fd);
    return -1;
  }
#if defined(F_ADD_SEALS)
  /* Read-only from here on, as the file was to the job (a memfd is opened read-write). */
  fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL);
#endif
  return fd;
}

/*
 * In a forked child: the job, its stdin its config (`config`; NULL: the run's stdin.json, which the daemon wrote),
 * stdout and stderr the run's files, in its directory. Never returns.
 */
static void exec_job(const char *dir, const char *cwd, char **argv, char **envp, const char *config) {
  char path[4096];
  default_signals();
  int in = -1, out = -1, err = -1;
  snprintf(path, sizeof path, "%s/stderr.log", dir);
  err = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  snprintf(path, sizeof path, "%s/stdout.log", dir);
  out = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  int out_errno = errno;
  if (config) {
    in = config_stdin(dir, config);
  } else {
    snprintf(path, sizeof path, "%s/stdin.json", dir);
    in = open(path, O_RDONLY | O_CLOEXEC);
  }
  if (in < 0 || out < 0 || err < 0) {
    if (err >= 0 && out < 0) dprintf(err, "platform: could not open the run's stdout.log in '%s': %s\n", dir, strerror(out_errno));
    else if (err >= 0) dprintf(err, "platform: could not give the job its config (its stdin) in '%s': %s\n", dir, strerror(errno));
    _exit(126);
  }
  if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) _exit(126);
  if (chdir(cwd) != 0) {
    dprintf(2, "platform: could not enter the job's directory '%s': %s\n", cwd, strerror(errno));
    _exit(126);
  }
  execve(argv[0], argv, envp);
  int e = errno;
  dprintf(2, "platform: could not start the job '%s': %s\n", argv[0], strerror(e));
  _exit(e == ENOENT ? 127 : 126);
}

extern char **environ;

/* The whole of a file (NUL-terminated, for a last field missing its NUL), or NULL with errno set; `at` and `path` as
 * openat takes them. */
static char *read_file(int at, const char *path, size_t *lenp) {
  int fd = openat(at, path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NULL;
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap);
  while (buf) {
    if (cap - len < 2) {
      char *more = realloc(buf, cap * 2);
      if (!more) break;
      buf = more;
      cap *= 2;
    }
    ssize_t n = read(fd, buf + len, cap - len - 1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    if (n == 0) {
      close(fd);
      buf[len] = '\0';
      *lenp = len;
      return buf;
    }
    len += (size_t)n;
  }
  int e = buf ? errno : ENOMEM;
  free(buf);
  close(fd);
  errno = e;
  return NULL;
}

/*
 * `count NUL field_1 NUL .. field_count NUL` from buf[*pos..len) as a NULL-terminated array of pointers into buf;
 * NULL when malformed (or out of memory). `at_least`: fewer is malformed (a job needs its program).
 */
static char **counted_fields(char *buf, size_t len, size_t *pos, size_t at_least) {
  char *end = memchr(buf + *pos, '\0', len - *pos);
  if (!end || end == buf + *pos) return NULL;
  for (const char *c = buf + *pos; c < end; c++)
    if (*c < '0' || *c > '9') return NULL;
  size_t n = strtoul(buf + *pos, NULL, 10);
  if (n < at_least || n > len) return NULL;
  *pos = (size_t)(end - buf) + 1;
  char **out = malloc((n + 1) * sizeof *out);
  if (!out) return NULL;
  for (size_t i = 0; i < n; i++) {
    end = *pos < len ? memchr(buf + *pos, '\0', len - *pos) : NULL;
    if (!end) {
      free(out);
      return NULL;
    }
    out[i] = buf + *pos;
    *pos = (size_t)(end - buf) + 1;
  }
  out[n] = NULL;
  return out;
}

/* Whether the launcher timed out the run of `pid` (its `timed-out` mark, note_timeout): a directory's earlier attempt
 * left its own pid there. */
static int timed_out_mark(int dfd, const char *dir, pid_t pid) {
  char buf[4096];
  int at;
  const char *path = run_file(&at, dfd, dir, "timed-out", buf, sizeof buf);
  if (!path) return 0;
  size_t len = 0;
  char *text = read_file(at, path, &len);
  if (!text) return 0;
  int mine = strtol(text, NULL, 10) == (long)pid;
  free(text);
  return mine;
}

static int supervise(int argc, char **argv) {
  /* `<dir>`, or `<dir> <timeout_ms> <grace_ms>`: the run's timeout and grace, as its launch record has them. */
  long long timeout_ms = argc == 5 ? parse_ms(argv[3]) : 0, grace_ms = argc == 5 ? parse_ms(argv[4]) : 0;
  if ((argc != 3 && argc != 5) || timeout_ms < 0 || grace_ms < 0) {
    fprintf(stderr, "usage: platform-launcher --supervise <dir> [<timeout_ms> <grace_ms>]  (started by the launcher, in the run's directory)\n");
    return 2;
  }
  /* First: a launcher gone while the fields were read must not be taken for the parent it was. */
  pid_t launcher = getppid();
  /* From this process's start, which follows the launcher's fork: never before the launcher's own deadline. */
  long long deadline = timeout_ms > 0 ? now_ms() + timeout_ms : 0;
  const char *dir = argv[2];
  /* Held open from here: the status, the timeout's mark and its line land in the run's directory wherever it is then. */
  int dfd = open_run_dir(dir);
  char path[4096];
  size_t len = 0;
  char *spec = NULL;
  char **env = NULL, **args = NULL;
  if ((size_t)snprintf(path, sizeof path, "%s/exec.fields", dir) < sizeof path) spec = read_file(AT_FDCWD, path, &len);
  if (!spec) {
    /* stderr is the run's stderr.log (the launcher opened it); the launcher records the exit as the run's end. */
    fprintf(stderr, "platform: could not read the job's environment and arguments in '%s': %s\n", dir, strerror(errno));
    return 126;
  }
  /* Read once, and it holds the daemon's environment: gone from the disk as soon as it is read. */
  unlink(path);
  size_t pos = 0;
  env = counted_fields(spec, len, &pos, 0);
  if (env) args = counted_fields(spec, len, &pos, 1);
  if (!args) {
    fprintf(stderr, "platform: the job's environment and arguments in '%s/exec.fields' are malformed\n", dir);
    return 126;
  }
  /* Blocked, and taken with sigtimedwait, not ignored (which the job would inherit): a cancel's SIGTERM to the group
   * ends the job, and this process outlives it to say how it ended; a timeout's starts the grace this process keeps
   * too, should its launcher die in it. Blocked from before the fork: a SIGTERM that came before the job was forked is
   * passed on to it; one after it is pending in the job too, until its exec_job sets the defaults. */
  sigset_t waited, before;
  sigemptyset(&waited);
  sigaddset(&waited, SIGTERM);
  sigaddset(&waited, SIGCHLD);
  sigprocmask(SIG_BLOCK, &waited, &before);
  pid_t self = getpid();
  pid_t job = fork();
  if (job < 0) {
    fprintf(stderr, "platform: could not fork the job: %s\n", strerror(errno));
    return 126;
  }
  if (job == 0) {
    /* The run's pid is this supervisor's: killed alone (kill -9 of that pid, the OOM killer), it takes its job with
     * it rather than leave it running beside the run's next attempt. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != self) _exit(137);
    /* Already in the job's directory: the launcher started this process there. */
    exec_job(dir, ".", args, env, NULL);
  }
  sigset_t pending;
  if (sigpending(&pending) == 0 && sigismember(&pending, SIGTERM)) kill(job, SIGTERM);
  /* The grace's SIGKILL, once the run timed out: the launcher sends it, but a launcher that died in the grace does not,
   * and what ignored the SIGTERM would run on until a daemon's backstop (or for ever, with none). */
  long long kill_at = 0;
  int killed = 0, status = 0;
  pid_t r;
  for (;;) {
    r = waitpid(job, &status, WNOHANG);
    if (r == job || (r < 0 && errno != EINTR)) break;
    long long now = now_ms();
    /* Its launcher gone before the deadline, nobody else times the run out: this process does as the launcher would. */
    if (deadline && now >= deadline) {
      deadline = 0;
      if (!kill_at && !killed && getppid() != launcher) {
        note_timeout(dfd, dir, timeout_ms, self);
        kill(-self, SIGTERM);
        kill_at = now + grace_ms;
      }
    }
    if (kill_at && now >= kill_at) {
      kill_at = 0;
      killed = 1;
      kill(job, SIGKILL);
      continue;
    }
    long long next = deadline && (!kill_at || deadline < kill_at) ? deadline : kill_at;
    struct timespec wait_for = {0, 0};
    if (next) {
      long long left = next > now ? next - now : 0;
      wait_for.tv_sec = (time_t)(left / 1000);
      wait_for.tv_nsec = (long)(left % 1000) * 1000000L;
    }
    siginfo_t info;
    int sig = sigtimedwait(&waited, &info, next ? &wait_for : NULL);
    /* A timeout's SIGTERM (its launcher's mark names this process, written before the signal): the grace starts now.
     * A cancel's is the daemon's to follow up; one sent to this process alone (a person's) is taken as before, for
     * nothing. */
    if (sig == SIGTERM && argc == 5 && !kill_at && !killed && timed_out_mark(dfd, dir, self)) kill_at = now_ms() + grace_ms;
  }
  int code = r == job ? exit_status(status) : 126; /* the job not our child: cannot happen */
  /* The launcher writes the status once this process ended, with its own word on a timeout. Only when it is gone (this
   * process was given to another parent) does nobody else: then this one does, so a next daemon knows the end. */
  if (getppid() != launcher) {
    write_status(dfd, dir, code, self, timed_out_mark(dfd, dir, self));
    /* A job that obeyed a timeout's SIGTERM may leave what ignored it (its children): the launcher sends the group's
     * SIGKILL at the grace's end whether or not the job ended by then, and with it gone this process does. The group
     * cannot be reused while this process, its leader, lives. */
    while (kill_at && !killed) {
      long long left = kill_at - now_ms();
      if (left <= 0) {
        killed = 1;
        break;
      }
      struct timespec nap = {(time_t)(left / 1000), (long)(left % 1000) * 1000000L};
      nanosleep(&nap, NULL);
    }
  }
  /* What else of the group ignored the SIGTERM (the job's children): the launcher's SIGKILL would have ended it, and
   * this process with it. Only now, the status written: a pid found gone has its status beside it. */
  if (killed) kill(-self, SIGKILL);
  return code;
}

/*
 * Runs the launcher started and has not seen end, by pid. Linear: a daemon runs a few at a time. A run that timed
 * out and ended before its group's SIGKILL follow-up stays, with id and dir NULL, until it is sent: what the job
 * started may ignore SIGTERM and outlive it (the daemon sends the same follow-up, with the same small risk: once the
 * group is empty, its id may be reused within the grace).
 */
struct run {
  pid_t pid;
  char *id;
  char *dir;
  int dfd; /* its directory held open (open_run_dir), where its status is written; -1 for none (then by `dir`) */
  long long timeout_ms;
  long long grace_ms;
  long long deadline; /* CLOCK_MONOTONIC ms at which it times out; 0 for none, or once passed */
  long long kill_at;  /* its group's SIGKILL, once timed out; 0 for none, or once sent */
  int timed_out;
};
static struct run *runs;
static size_t nruns, capruns;

/* Room for one more run, taken before its fork: a run forked and not remembered would end without a status. */
static int make_room(const char *id, const char *dir) {
  if (nruns == capruns) {
    size_t cap = capruns ? capruns * 2 : 16;
    struct run *more = realloc(runs, cap * sizeof *runs);
    if (!more) return -1;
    runs = more;
    capruns = cap;
  }
  runs[nruns].id = strdup(id);
  runs[nruns].dir = strdup(dir);
  if (runs[nruns].id && runs[nruns].dir) return 0;
  free(runs[nruns].id);
  free(runs[nruns].dir);
  return -1;
}

/*
 * A new job got `pid`: a pid is not given out again while it still names a process group, so the group of an ended
 * run with that pid is empty, and its pending follow-up must not reach the new job's group.
 */
static void forget_group(pid_t pid) {
  for (size_t i = 0; i < nruns; i++) {
    if (!runs[i].id && runs[i].pid == pid) {
      runs[i] = runs[--nruns];
      return;
    }
  }
}

/*
 * Each run that ended: its status.json while the job is still a zombie (WNOWAIT), then the reap, then the news. So
 * a next daemon that finds the pid gone finds the status too, and one that finds a zombie knows to wait.
 */
static void reap(void) {
  for (;;) {
    siginfo_t info;
    memset(&info, 0, sizeof info);
    if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0) return;
    pid_t pid = info.si_pid;
    int code = info.si_code == CLD_EXITED ? info.si_status : 128 + info.si_status;
    size_t i = 0;
    while (i < nruns && !(runs[i].id && runs[i].pid == pid)) i++;
    if (i < nruns) write_status(runs[i].dfd, runs[i].dir, code, pid, runs[i].timed_out);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (i == nruns) continue;
    news("x", runs[i].id, code);
    free(runs[i].id);
    free(runs[i].dir);
    runs[i].id = runs[i].dir = NULL;
    if (runs[i].dfd >= 0) close(runs[i].dfd);
    runs[i].dfd = -1;
    /* Its group already empty, the follow-up SIGKILL has nothing to end, and the id could be anyone's later. */
    if (!runs[i].kill_at || (kill(-pid, 0) != 0 && errno == ESRCH)) runs[i] = runs[--nruns];
  }
}

/* Sends what is due: SIGTERM to a run's group at its deadline, SIGKILL grace_ms later (as the daemon does). */
static void fire_timers(void) {
  long long now = now_ms();
  size_t i = 0;
  while (i < nruns) {
    struct run *r = &runs[i];
    if (r->deadline && now >= r->deadline) {
      r->deadline = 0;
      siginfo_t info;
      memset(&info, 0, sizeof info);
      /* Ended in time, its reap not yet done (its SIGCHLD is pending): not timed out. */
      int ended = waitid(P_PID, (id_t)r->pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == r->pid;
      if (!ended) {
        r->timed_out = 1;
        note_timeout(r->dfd, r->dir, r->timeout_ms, r->pid);
        kill(-r->pid, SIGTERM);
        r->kill_at = now + r->grace_ms;
      }
    }
    if (r->kill_at && now >= r->kill_at) {
      r->kill_at = 0;
      /* Only a group still there: an empty one's id may have been taken since (a non-empty group holds it). */
      if (kill(-r->pid, 0) == 0) kill(-r->pid, SIGKILL);
      if (!r->id) {
        runs[i] = runs[--nruns];
        continue;
      }
    }
    i++;
  }
}

/* The poll's timeout: until the nearest deadline or follow-up; -1 (none) when no run has one. */
static int next_wake(void) {
  long long next = 0;
  for (size_t i = 0; i < nruns; i++) {
    if (runs[i].deadline && (!next || runs[i].deadline < next)) next = runs[i].deadline;
    if (runs[i].kill_at && (!next || runs[i].kill_at < next)) next = runs[i].kill_at;
  }
  if (!next) return -1;
  long long left = next - now_ms();
  return left <= 0 ? 0 : left > INT_MAX ? INT_MAX : (int)left;
}

/* mkdir -p: the run's directory and, the first time, .platform/logs above it. */
static int make_dirs(char *path) {
  if (mkdir(path, 0755) == 0 || errno == EEXIST) return 0;
  if (errno != ENOENT) return -1;
  char *slash = strrchr(path, '/');
  if (!slash || slash == path) return -1;
  *slash = '\0';
  int r = make_dirs(path);
  *slash = '/';
  if (r != 0) return -1;
  return mkdir(path, 0755) == 0 || errno == EEXIST ? 0 : -1;
}

/*
 * The run's directory (its config goes to the job as a memfd: config_stdin); 0, or the errno of what failed. A
 * directory that was there already (a run started again under its id) gets this attempt's config as stdin.json: the
 * mark of its hand-over, which tells its stdout.log from an earlier attempt's (run-files.ts startFromFiles), and no
 * earlier attempt's stdin.json is left to pass for this one's.
 */
static int make_run_dir(char *dir, const char *config) {
  char path[4096];
  /* Room for the longest of its files' names (status.json.tmp), which the job's child opens without a check of its own. */
  if (strlen(dir) + sizeof "/status.json.tmp" > sizeof path) return ENAMETOOLONG;
  if (mkdir(dir, 0755) == 0) return 0;
  if (errno != EEXIST) return make_dirs(dir) != 0 ? errno : 0;
  /* A directory that was there may hold an earlier attempt's files, which would read as this one's end (run-files.ts
   * does the same). */
  static const char *const stale[] = {"status.json", "status.link", "cancel.json"};
  for (size_t i = 0; i < 3; i++) {
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, stale[i]) >= sizeof path) return ENAMETOOLONG;
    if (unlink(path) != 0 && errno != ENOENT) return errno;
  }
  snprintf(path, sizeof path, "%s/stdin.json", dir);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return errno;
  int e = write_all(fd, config, strlen(config)) != 0 ? errno : 0;
  if (close(fd) != 0 && e == 0) e = errno;
  return e;
}

/*
 * Runs held until a slot frees: the daemon may hand over more runs than may run at once (`slots`), and the next one
 * starts the moment one of this launcher's runs ends, without the daemon's round trip between the two (docs/decisions.md,
 * "Speed, session 24"). Each is its record as read, in order.
 */
struct held {
  char *record;
  size_t len;
};
static struct held *heldq;
static size_t nheld, capheld, headheld;
/* How many of this launcher's runs may run at once; -1: no limit (every record starts at once). */
static long long slots = -1;
/*
 * The daemon closed its end (POLLHUP): nobody hears a start any more, so nothing starts, held or read, until the end
 * of input forgets what is held (the log has those runs queued, for the next daemon).
 */
static int closing;

static size_t live_runs(void) {
  size_t n = 0;
  for (size_t i = 0; i < nruns; i++)
    if (runs[i].id) n++;
  return n;
}

static int slot_free(void) { return !closing && (slots < 0 || (long long)live_runs() < slots); }

static long launch_record(char *buf, size_t len, int from_hold);

/*
 * Whether the daemon canceled a held run (its cancel.json, written before it tells the launcher): a cancel that kills
 * a running run frees its slot, and its `cancel` record may come after the end that would start the held one.
 */
static int canceled(const char *record, size_t len) {
  size_t id_len = strnlen(record, len);
  if (id_len + 1 >= len) return 0;
  char path[4096];
  if ((size_t)snprintf(path, sizeof path, "%s/cancel.json", record + id_len + 1) >= sizeof path) return 0;
  return access(path, F_OK) == 0;
}

/* Starts held runs while a slot is free, oldest first. */
static void start_held(void) {
  while (headheld < nheld && slot_free()) {
    struct held h = heldq[headheld++];
    if (canceled(h.record, h.len)) news("d", h.record, 0);
    else launch_record(h.record, h.len, 1);
    free(h.record);
  }
  if (headheld == nheld) headheld = nheld = 0;
}

static int hold(const char *record, size_t len) {
  if (nheld == capheld) {
    if (headheld > 0) {
      memmove(heldq, heldq + headheld, (nheld - headheld) * sizeof *heldq);
      nheld -= headheld;
      headheld = 0;
    }
    if (nheld == capheld) {
      size_t cap = capheld ? capheld * 2 : 16;
      struct held *more = realloc(heldq, cap * sizeof *heldq);
      if (!more) return -1;
      heldq = more;
      capheld = cap;
    }
  }
  char *copy = malloc(len);
  if (!copy) return -1;
  memcpy(copy, record, len);
  heldq[nheld].record = copy;
  heldq[nheld].len = len;
  nheld++;
  return 0;
}

/* A held run canceled before it started: dropped, and said so (`d <id> 0`). One started already is the daemon's to kill. */
static void drop_held(const char *id) {
  for (size_t i = headheld; i < nheld; i++) {
    if (strcmp(heldq[i].record, id) != 0) continue;
    free(heldq[i].record);
    memmove(heldq + i, heldq + i + 1, (nheld - i - 1) * sizeof *heldq);
    nheld--;
    news("d", id, 0);
    return;
  }
}

/* The end of input: runs not started stay queued in the daemon's log, for the next daemon to start. */
static void forget_held(void) {
  for (size_t i = headheld; i < nheld; i++) free(heldq[i].record);
  headheld = nheld = 0;
}

/* A control record: an empty id, then what to do. `slots N` (N empty: no limit) or `cancel <id>`. */
static long control_record(char *buf, size_t len) {
  char *fields[2];
  size_t pos = 0;
  for (size_t nf = 0; nf < 2; nf++) {
    char *end = memchr(buf + pos, '\0', len - pos);
    if (!end) return 0;
    fields[nf] = buf + pos;
    pos = (size_t)(end - buf) + 1;
  }
  if (strcmp(fields[0], "slots") == 0) {
    long long n = fields[1][0] == '\0' ? -1 : parse_ms(fields[1]);
    if (fields[1][0] != '\0' && n < 0) return -1;
    slots = n;
  } else if (strcmp(fields[0], "cancel") == 0) {
    drop_held(fields[1]);
  } else if (strcmp(fields[0], "sync") == 0) {
    /* Everything before it is done (a `slots 0` before it applied): the daemon may stop listening. */
    news("y", "-", 0);
  } else {
    return -1;
  }
  return (long)pos;
}

/*
 * Parses one whole record at buf[0..len); returns its length, 0 when incomplete, -1 when malformed. `from_hold`: a
 * record held before, whose files are written: it starts now.
 */
static long launch_record(char *buf, size_t len, int from_hold) {
  if (!from_hold && len > 0 && buf[0] == '\0') {
    long used = control_record(buf + 1, len - 1);
    return used > 0 ? used + 1 : used;
  }
  char *fields[8192];
  size_t nf = 0, pos = 0;
  size_t need = 7; /* id, dir, cwd, stdin, timeout_ms, grace_ms, n */
  size_t nenv = 0, narg = 0;
  int stage = 0;
  while (nf < need) {
    char *end = memchr(buf + pos, '\0', len - pos);
    if (!end) return 0;
    if (nf >= sizeof fields / sizeof *fields - 2) return -1;
    fields[nf++] = buf + pos;
    pos = (size_t)(end - buf) + 1;
    if (stage == 0 && nf == 7) {
      nenv = strtoul(fields[6], NULL, 10);
      if (nenv > 8000) return -1;
      need = 7 + nenv + 1;
      stage = 1;
    } else if (stage == 1 && nf == need) {
      narg = strtoul(fields[need - 1], NULL, 10);
      if (narg > 8000) return -1;
      if (narg == 0) return -1;
      need += narg;
      stage = 2;
    }
  }
  const char *id = fields[0];
  long long timeout_ms = parse_ms(fields[4]), grace_ms = parse_ms(fields[5]);
  if (timeout_ms < 0 || grace_ms < 0) return -1;
  char **env = &fields[7];
  char **args = &fields[7 + nenv + 1];
  if (!from_hold && fields[3][0] != '\0') {
    int e = make_run_dir(fields[1], fields[3]);
    if (e != 0) {
      news("w", id, e);
      return (long)pos;
    }
  }
  if (!from_hold && (headheld < nheld || !slot_free())) {
    if (hold(buf, pos) != 0) news("f", id, ENOMEM);
    return (long)pos;
  }
  /* The job's environment and argv, NULL-terminated (fields has room: over the counts, read above). */
  env[nenv] = NULL;
  args[narg] = NULL;

  if (make_room(id, fields[1]) != 0) {
    news("f", id, ENOMEM);
    return (long)pos;
  }
  /* Opened before the fork (close-on-exec: the job does not get it), once its files are there. */
  int dfd = open_run_dir(fields[1]);
  pid_t pid = fork();
  if (pid < 0) {
    news("f", id, errno);
    free(runs[nruns].id);
    free(runs[nruns].dir);
    if (dfd >= 0) close(dfd);
    return (long)pos;
  }
  if (pid == 0) {
    setsid();
    exec_job(fields[1], fields[2], args, env, fields[3][0] != '\0' ? fields[3] : NULL);
  }
  struct run fresh = {
      .pid = pid,
      .id = runs[nruns].id, /* what make_room took */
      .dir = runs[nruns].dir,
      .dfd = dfd,
      .timeout_ms = timeout_ms,
      .grace_ms = grace_ms,
      /* From the fork, as the daemon's timer counts from the start (the launch record's trip is ~1 ms). */
      .deadline = timeout_ms > 0 ? now_ms() + timeout_ms : 0,
  };
  forget_group(pid);
  runs[nruns++] = fresh;
  news("s", id, (long)pid);
  return (long)pos;
}

/* No more records read and no more news sent: the daemon sees the launcher gone, while its runs are still reaped. */
static void give_up_input(void) {
  /* /dev/null over both rather than closed: a later open must not get fd 1 and take the news for a status. */
  int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null < 0) {
    close(0);
    close(1);
    return;
  }
  dup2(null, 0);
  dup2(null, 1);
  close(null);
}

/*
 * Reads what the daemon wrote and handles each whole record; 0 while the input stays open, -1 once it ended (end of
 * file, a malformed record, or no memory for the buffer: then news ends too).
 */
static int read_input(char **bufp, size_t *capp, size_t *lenp) {
  char *buf = *bufp;
  size_t cap = *capp, len = *lenp;
  if (cap - len < 4096) {
    char *more = realloc(buf, cap * 2);
    if (!more) {
      give_up_input();
      return -1;
    }
    *bufp = buf = more;
    *capp = cap = cap * 2;
  }
  ssize_t n = read(0, buf + len, cap - len);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return 0;
  if (n <= 0) return -1;
  len += (size_t)n;
  size_t done = 0;
  for (;;) {
    long used = launch_record(buf + done, len - done, 0);
    if (used < 0) {
      give_up_input();
      return -1;
    }
    if (used == 0) break;
    done += (size_t)used;
  }
  memmove(buf, buf + done, len - done);
  *lenp = len - done;
  return 0;
}

int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "--supervise") == 0) return supervise(argc, argv);
  if (argc < 2) {
    fprintf(stderr, "usage: platform-launcher <workspace>  (started by the platform daemon)\n");
    return 2;
  }
  /* Its own session: what is sent to the daemon's group (a terminal's ^C, a kill of the group) must not end the
   * supervisor of the runs, which go on without the daemon. */
  setsid();
  signal(SIGPIPE, SIG_IGN);

  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, NULL);
  int sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0) return 71;

  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap);
  if (!buf) return 70;
  int open_input = 1;
  /* After the end of input (the daemon closed it, or is gone) only the runs still going are waited for. */
  while (open_input || nruns > 0) {
    struct pollfd fds[2] = {{sfd, POLLIN, 0}, {open_input ? 0 : -1, POLLIN, 0}};
    /* The nearest deadline is the poll's timeout: the runs' timeouts cost no thread, process or tick of their own. */
    if (poll(fds, 2, next_wake()) < 0) {
      /* Out of memory for a moment, say: the runs' statuses are worth a retry, not an exit. */
      if (errno != EINTR) usleep(10000);
      continue;
    }
    if (open_input && (fds[1].revents & POLLHUP)) closing = 1;
    /* Input first: a cancel or `slots` the daemon sent before a run ended is applied before that end starts a held run. */
    if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) {
      if (read_input(&buf, &cap, &len) != 0) {
        open_input = 0;
        forget_held();
      }
    }
    if (fds[0].revents & POLLIN) {
      struct signalfd_siginfo info;
      while (read(sfd, &info, sizeof info) == sizeof info) {
      }
      reap();
    }
    /* After the reap: a job that ended by its deadline is not timed out. */
    fire_timers();
    if (open_input) start_held();
  }
  free(buf);
  free(runs);
  return 0;
}
