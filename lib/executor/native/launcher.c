/*
 * platform-launcher: starts supervised job runs for the daemon, at the cost of a fork and two execs a run.
 *
 * Why native: the shell launcher's chain (a subshell, setsid, env, sh, run.sh, the job) costs ~4 ms a run on this
 * kind of machine, where GNU make pays under one for a trivial job. This program does what that chain does, in
 * the same places, so a run keeps every property the shell supervisor gave it (docs/decisions.md, "Speed, session 7"):
 *
 *   launcher mode:   platform-launcher <workspace>
 *     Reads records from stdin, each
 *     `id NUL dir NUL cwd NUL stdin NUL n NUL env_1 NUL .. env_n NUL m NUL arg_1 NUL .. arg_m NUL` (arg_1 is the
 *     program's absolute path). A non-empty `stdin` is the job's config: the launcher makes the run's directory and
 *     writes it there as stdin.json (file work off the daemon's event loop); empty, the daemon wrote them. A run
 *     whose files cannot be written is answered `w <id> <errno>` (one that cannot be forked `f <id> <errno>`) and
 *     is not started. For each other it forks a child that starts a session of its own (setsid: it outlives the
 *     daemon and a cancel reaches its whole group) and execs this program as the run's supervisor
 *     with the job's environment (so /proc/<pid>/environ names the run, as the daemon's identity check expects).
 *     Writes `s <id> <pid>` once the supervisor is forked and `x <id> <status>` once it ended (status: its exit
 *     code, 128+n when killed by signal n). Exits at end of input: the supervisors go on without it.
 *
 *   supervisor mode: platform-launcher --supervise <dir> <cwd> <program> [args...]
 *     Runs the job as its child, stdin from <dir>/stdin.json, stdout and stderr appended to <dir>/stdout.log and
 *     <dir>/stderr.log, in <cwd>; then writes {"exit_code":N} to <dir>/status.json (128+n for a job killed by
 *     signal n, as a shell reports it) and exits with N. SIGTERM is caught (not ignored, which the job would
 *     inherit) so that a cancel reaching the whole group lets the supervisor outlive its job and record it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_term(int sig) { (void)sig; }

static void default_signals(void) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  for (int s = 1; s < NSIG; s++) {
    if (s == SIGKILL || s == SIGSTOP) continue;
    signal(s, SIG_DFL);
  }
}

static void write_all(int fd, const char *buf, size_t len) {
  while (len > 0) {
    ssize_t n = write(fd, buf, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    buf += n;
    len -= (size_t)n;
  }
}

/* One line of news; an id too long for the line is cut (the daemon's ids are short). */
static void news(const char *kind, const char *id, long value) {
  char line[512];
  int n = snprintf(line, sizeof line, "%s %.400s %ld\n", kind, id, value);
  if (n < 0) return;
  if ((size_t)n >= sizeof line) n = (int)sizeof line - 1;
  write_all(1, line, (size_t)n);
}

static int exit_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

static int supervise(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: platform-launcher --supervise <dir> <cwd> <program> [args...]\n");
    return 2;
  }
  const char *dir = argv[2];
  const char *cwd = argv[3];
  char path[4096];
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_term;
  sigaction(SIGTERM, &sa, NULL);

  pid_t job = fork();
  int code = 126;
  if (job < 0) {
    /* Recorded like any end, so the run fails with a reason rather than being found lost. */
    int e = errno;
    snprintf(path, sizeof path, "%s/stderr.log", dir);
    int err = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (err >= 0) {
      dprintf(err, "platform: could not fork the job: %s\n", strerror(e));
      close(err);
    }
    goto record;
  }
  if (job == 0) {
    default_signals();
    int in = -1, out = -1, err = -1;
    snprintf(path, sizeof path, "%s/stdin.json", dir);
    in = open(path, O_RDONLY | O_CLOEXEC);
    snprintf(path, sizeof path, "%s/stdout.log", dir);
    out = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    snprintf(path, sizeof path, "%s/stderr.log", dir);
    err = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (in < 0 || out < 0 || err < 0) {
      if (err >= 0) dprintf(err, "platform: could not open the run's files in '%s': %s\n", dir, strerror(errno));
      _exit(126);
    }
    if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) _exit(126);
    if (chdir(cwd) != 0) {
      dprintf(2, "platform: could not enter the job's directory '%s': %s\n", cwd, strerror(errno));
      _exit(126);
    }
    execv(argv[4], argv + 4);
    int e = errno;
    dprintf(2, "platform: could not start the job '%s': %s\n", argv[4], strerror(e));
    _exit(e == ENOENT ? 127 : 126);
  }
  int status = 0;
  while (waitpid(job, &status, 0) < 0) {
    if (errno != EINTR) goto record;
  }
  code = exit_status(status);
record:
  snprintf(path, sizeof path, "%s/status.json", dir);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd >= 0) {
    char line[64];
    int n = snprintf(line, sizeof line, "{\"exit_code\":%d}\n", code);
    write_all(fd, line, (size_t)n);
    close(fd);
  }
  return code;
}

/* Runs the launcher started and has not heard the end of: pid -> id. Linear: a daemon runs a few at a time. */
struct run {
  pid_t pid;
  char *id;
};
static struct run *runs;
static size_t nruns, capruns;

static void remember(pid_t pid, const char *id) {
  if (nruns == capruns) {
    capruns = capruns ? capruns * 2 : 16;
    runs = realloc(runs, capruns * sizeof *runs);
    if (!runs) exit(70);
  }
  runs[nruns].pid = pid;
  runs[nruns].id = strdup(id);
  nruns++;
}

static void reap(void) {
  int status;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
    for (size_t i = 0; i < nruns; i++) {
      if (runs[i].pid != pid) continue;
      news("x", runs[i].id, exit_status(status));
      free(runs[i].id);
      runs[i] = runs[--nruns];
      break;
    }
  }
}

static const char *self_path;

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

/* The run's directory and its stdin.json; 0, or the errno of what failed. */
static int write_run_files(char *dir, const char *stdin_json) {
  if (make_dirs(dir) != 0) return errno;
  char path[4096];
  if ((size_t)snprintf(path, sizeof path, "%s/stdin.json", dir) >= sizeof path) return ENAMETOOLONG;
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return errno;
  size_t len = strlen(stdin_json);
  const char *p = stdin_json;
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      close(fd);
      return e;
    }
    p += n;
    len -= (size_t)n;
  }
  if (close(fd) != 0) return errno;
  return 0;
}

/* Parses one whole record at buf[0..len); returns its length, 0 when incomplete, -1 when malformed. */
static long launch_record(char *buf, size_t len) {
  char *fields[8192];
  size_t nf = 0, pos = 0;
  size_t need = 5; /* id, dir, cwd, stdin, n */
  size_t nenv = 0, narg = 0;
  int stage = 0;
  while (nf < need) {
    char *end = memchr(buf + pos, '\0', len - pos);
    if (!end) return 0;
    if (nf >= sizeof fields / sizeof *fields - 2) return -1;
    fields[nf++] = buf + pos;
    pos = (size_t)(end - buf) + 1;
    if (stage == 0 && nf == 5) {
      nenv = strtoul(fields[4], NULL, 10);
      if (nenv > 8000) return -1;
      need = 5 + nenv + 1;
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
  char **env = &fields[5];
  char **args = &fields[5 + nenv + 1];
  if (fields[3][0] != '\0') {
    int e = write_run_files(fields[1], fields[3]);
    if (e != 0) {
      news("w", id, e);
      return (long)pos;
    }
  }
  /* argv: --supervise dir cwd program args... ; env: the job's, NULL-terminated (fields has room) */
  char *sargv[8192 + 4];
  size_t k = 0;
  sargv[k++] = "platform-supervisor";
  sargv[k++] = "--supervise";
  sargv[k++] = fields[1];
  sargv[k++] = fields[2];
  for (size_t i = 0; i < narg && k < sizeof sargv / sizeof *sargv - 1; i++) sargv[k++] = args[i];
  sargv[k] = NULL;
  env[nenv] = NULL; /* over the argument count, read above */

  pid_t pid = fork();
  if (pid < 0) {
    news("f", id, errno);
    return (long)pos;
  }
  if (pid == 0) {
    setsid();
    default_signals();
    int devnull = open("/dev/null", O_RDWR);
    if (devnull >= 0) {
      dup2(devnull, 0);
      dup2(devnull, 1);
      dup2(devnull, 2);
      if (devnull > 2) close(devnull);
    } else {
      /* Never the launcher's pipes: the daemon reads the launcher's stdout to its end. */
      close(0);
      close(1);
      close(2);
    }
    execve(self_path, sargv, env);
    _exit(127);
  }
  remember(pid, id);
  news("s", id, (long)pid);
  return (long)pos;
}

int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "--supervise") == 0) return supervise(argc, argv);
  if (argc < 2) {
    fprintf(stderr, "usage: platform-launcher <workspace>  (started by the platform daemon)\n");
    return 2;
  }
  static char self[4096];
  ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
  if (sl <= 0) return 71;
  self[sl] = '\0';
  self_path = self;
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
  while (open_input) {
    struct pollfd fds[2] = {{0, POLLIN, 0}, {sfd, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return 71;
    }
    if (fds[1].revents & POLLIN) {
      struct signalfd_siginfo info;
      while (read(sfd, &info, sizeof info) == sizeof info) {
      }
      reap();
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      if (cap - len < 4096) {
        cap *= 2;
        buf = realloc(buf, cap);
        if (!buf) return 70;
      }
      ssize_t n = read(0, buf + len, cap - len);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        open_input = 0;
        break;
      }
      len += (size_t)n;
      size_t done = 0;
      for (;;) {
        long used = launch_record(buf + done, len - done);
        if (used < 0) return 65;
        if (used == 0) break;
        done += (size_t)used;
      }
      memmove(buf, buf + done, len - done);
      len -= done;
    }
  }
  return 0;
}
