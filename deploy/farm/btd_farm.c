/* boardtrace farm run: N LAVA jobs of the hold definition below, each on a
 * board LAVA picks; when a job says its board is ready, `boardtrace run`
 * (this program, as a child) profiles on the board's ssh address from its
 * device dictionary, then the host releases the job with the run's result,
 * which the job records (run pass/fail, zones and frames as measurements). */
#define _GNU_SOURCE
#include "btd_farm.h"

#include "btd_buf.h"
#include "btd_lava.h"
#include "btd_msg.h"
#include "btd_report.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FARM_MAX_BOARDS 64
#define FARM_MAX_TAGS   8
/* The summary's spread across the boards: the zones with the most time. */
#define FARM_SPREAD_TOP 10
/* While a run goes on, how often its job's state is asked of LAVA (a job
 * cancelled there, or ended by a lost board, stops the run), and how long
 * cancelled jobs may take to end there. */
#define FARM_JOB_CHECK_SECONDS 5.0
#define FARM_CANCEL_SECONDS    180.0

/* The job's test waits for the host's "RESULT ZONES FRAMES" in this file on
 * the board, then records them. */
static const char hold_job[] =
    "device_type: '%s'\n"
    "%s"
    "job_name: boardtrace farm %s\n"
    "timeouts:\n"
    "  job: {minutes: %d}\n"
    "  action: {minutes: %d}\n"
    "  connection: {minutes: 2}\n"
    "priority: medium\n"
    "visibility: public\n"
    "actions:\n"
    "- deploy: {to: ssh, os: debian, timeout: {minutes: 5}}\n"
    "- boot: {method: ssh, connection: ssh, prompts: ['root@', '# '], timeout: {minutes: 5}}\n"
    "- test:\n"
    "    timeout: {minutes: %d}\n"
    "    definitions:\n"
    "    - from: inline\n"
    "      name: boardtrace\n"
    "      path: inline/boardtrace.yaml\n"
    "      repository:\n"
    "        metadata: {format: Lava-Test Test Definition 1.0, name: boardtrace,\n"
    "                   description: hold the board while boardtrace profiles on it}\n"
    "        run:\n"
    "          steps:\n"
    "          - rm -f /tmp/boardtrace-release\n"
    "          - lava-test-case board-ready --result pass\n"
    "          - while [ ! -s /tmp/boardtrace-release ]; do sleep 1; done\n"
    "          - set -- $(cat /tmp/boardtrace-release)\n"
    "          - lava-test-case run --result \"$1\"\n"
    "          - lava-test-case zones --result pass --measurement \"$2\" --units zones\n"
    "          - lava-test-case frames --result pass --measurement \"$3\" --units frames\n";

enum board_step { WAITING, RUNNING, RELEASED, DONE };

struct board {
    long job;
    enum board_step step;
    struct btd_lava_job lava;
    struct btd_lava_ssh ssh;
    pid_t run;
    double next_check; /* when to ask LAVA again about the running job */
    int ended;         /* the job was cancelled (by us or in LAVA): no release */
    int status;        /* boardtrace run's exit status, -1 if it did not run */
    char zones[32];    /* from the run's record */
    char frames[32];
    double started, seconds;
    char failure[512]; /* why the board gave no trace, if it did not */
    char name[160];    /* DIR/NAME.tracy: the device, or DEVICE-JOB for its second job */
};

struct farm {
    const char *lava, *device_type, *out_dir, *known_hosts, *capture, *program;
    int count, hold_minutes, ready_timeout;
    int html;                        /* each run writes DIR/<device>.tracy.html too (run --html) */
    const char *tags[FARM_MAX_TAGS]; /* the job asks for a board with all of them */
    int tag_count;
    char **args;
    int arg_count;
    const struct board *boards; /* every job's, to name a device's second trace */
    int board_count;
};

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

static void usage(FILE *to)
{
    fputs("usage: boardtrace farm run --lava URL|IDENTITY --device-type T [--count N] -o DIR\n"
          "                           [--known-hosts FILE] [--capture FILE] [--hold-minutes M]\n"
          "                           [--ready-timeout S] [--tag TAG]... [--html]\n"
          "                           PROGRAM [-- ARGS...]\n"
          "Submits N LAVA jobs for boards of device type T (with --tag, boards that carry\n"
          "every TAG given in LAVA); each job holds its board while\n"
          "boardtrace run profiles PROGRAM on it, writing DIR/<device>.tracy and .json\n"
          "(with --html, its HTML report DIR/<device>.tracy.html too, as run --html).\n"
          "The token: lavacli's configuration (--lava IDENTITY), or LAVA_USER and LAVA_TOKEN\n"
          "in the environment (--lava URL); never on the command line.\n"
          "A job that LAVA ends while its run goes on (cancelled there, or its board lost)\n"
          "stops that run, which keeps what arrived. Ctrl-C cancels every job and keeps\n"
          "what arrived. The summary gives each board's run, then the spread across the\n"
          "boards of the 10 zones with the most time (boardtrace-report boards).\n"
          "Exit status: 0 every run passed and every job completed; else the first failed\n"
          "run's status (as boardtrace run's), 4 a job that ended in LAVA without a run\n"
          "that passed (cancelled, incomplete, no board ready), 130 interrupted.\n",
          to);
}

/* A device type or tag name: what goes into the job definition unquoted. */
static int name_ok(const char *name)
{
    if (!*name)
        return 0;
    for (const char *p = name; *p; p++)
        if (!(*p == '-' || *p == '_' || *p == '.' || (*p >= '0' && *p <= '9') ||
              (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
            return 0;
    return 1;
}

static int parse(int argc, char **argv, struct farm *f)
{
    enum { O_LAVA = 256, O_TYPE, O_COUNT, O_KNOWN, O_CAPTURE, O_HOLD, O_READY, O_HTML, O_TAG };
    static const struct option opts[] = {{"lava", required_argument, NULL, O_LAVA},
                                         {"device-type", required_argument, NULL, O_TYPE},
                                         {"count", required_argument, NULL, O_COUNT},
                                         {"output", required_argument, NULL, 'o'},
                                         {"known-hosts", required_argument, NULL, O_KNOWN},
                                         {"capture", required_argument, NULL, O_CAPTURE},
                                         {"hold-minutes", required_argument, NULL, O_HOLD},
                                         {"ready-timeout", required_argument, NULL, O_READY},
                                         {"html", no_argument, NULL, O_HTML},
                                         {"tag", required_argument, NULL, O_TAG},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    memset(f, 0, sizeof *f);
    f->count = 1;
    f->hold_minutes = 30;
    f->ready_timeout = 3600;
    if (argc < 2 || strcmp(argv[1], "run") != 0) {
        usage(stderr);
        return BTD_EXIT_USAGE;
    }
    argc--;
    argv++;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "+o:h", opts, NULL)) != -1) {
        char *end = NULL;
        long v = 0;
        if (c == O_COUNT || c == O_HOLD || c == O_READY) {
            errno = 0;
            v = strtol(optarg, &end, 10);
            if (errno || !*optarg || *end || optarg[0] < '0' || optarg[0] > '9' || v < 1 ||
                v > (c == O_COUNT ? FARM_MAX_BOARDS : 100000)) {
                btd_error("farm: %s: not a number in range", optarg);
                return BTD_EXIT_USAGE;
            }
        }
        switch (c) {
        case O_LAVA:
            f->lava = optarg;
            break;
        case O_TYPE:
            f->device_type = optarg;
            break;
        case O_COUNT:
            f->count = (int)v;
            break;
        case 'o':
            f->out_dir = optarg;
            break;
        case O_KNOWN:
            f->known_hosts = optarg;
            break;
        case O_CAPTURE:
            f->capture = optarg;
            break;
        case O_HOLD:
            f->hold_minutes = (int)v;
            break;
        case O_READY:
            f->ready_timeout = (int)v;
            break;
        case O_HTML:
            f->html = 1;
            break;
        case O_TAG:
            if (!name_ok(optarg) || strlen(optarg) > 200) {
                btd_error("farm: --tag %s: not a tag name (letters, digits, - _ ., at most 200)",
                          optarg);
                return BTD_EXIT_USAGE;
            }
            if (f->tag_count == FARM_MAX_TAGS) {
                btd_error("farm: at most %d --tag options", FARM_MAX_TAGS);
                return BTD_EXIT_USAGE;
            }
            f->tags[f->tag_count++] = optarg;
            break;
        case 'h':
            usage(stdout);
            return 1;
        default:
            usage(stderr);
            return BTD_EXIT_USAGE;
        }
    }
    if (!f->lava || !f->device_type || !f->out_dir || optind >= argc) {
        btd_error("farm run: --lava, --device-type, -o and PROGRAM are required");
        return BTD_EXIT_USAGE;
    }
    if (!name_ok(f->device_type)) {
        btd_error("farm: --device-type %s: not a device type name", f->device_type);
        return BTD_EXIT_USAGE;
    }
    f->program = argv[optind++];
    if (optind < argc && strcmp(argv[optind], "--") == 0)
        optind++;
    f->args = argv + optind;
    f->arg_count = argc - optind;
    return 0;
}

/* A device name becomes a file name in DIR: only what is safe there. */
static int device_name_ok(const char *d)
{
    if (!*d || d[0] == '.')
        return 0;
    for (; *d; d++)
        if (*d == '/' || *d < 0x21 || *d > 0x7e)
            return 0;
    return 1;
}

/* "zones": "N" and "frames": "N" of the run's record (its summary). */
static void read_record(const char *path, struct board *b)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    struct btd_buf buf = {0};
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        btd_buf_append(&buf, chunk, n);
    fclose(f);
    const char *summary = strstr(btd_buf_str(&buf), "\"summary\"");
    const char *keys[] = {"\"zones\"", "\"frames\""};
    char *outs[] = {b->zones, b->frames};
    for (int i = 0; summary && i < 2; i++) {
        const char *k = strstr(summary, keys[i]);
        if (!k)
            continue;
        k += strlen(keys[i]);
        k += strspn(k, ": \"");
        size_t len = strspn(k, "0123456789");
        if (len > 0 && len < sizeof b->zones)
            snprintf(outs[i], sizeof b->zones, "%.*s", (int)len, k);
    }
    btd_buf_free(&buf);
}

static pid_t start_run(const struct farm *f, struct board *b)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return -1;
    self[n] = '\0';
    char host[512], out[PATH_MAX], log[PATH_MAX];
    snprintf(host, sizeof host, "%s@%s:%d", b->ssh.user, b->ssh.host, b->ssh.port);
    snprintf(out, sizeof out, "%s/%s.tracy", f->out_dir, b->name);
    snprintf(log, sizeof log, "%s/%s.log", f->out_dir, b->name);
    const char **argv = btd_xmalloc(sizeof *argv * (size_t)(f->arg_count + 20));
    int a = 0;
    argv[a++] = self;
    argv[a++] = "run";
    argv[a++] = "--host";
    argv[a++] = host;
    if (b->ssh.identity[0]) {
        argv[a++] = "--identity";
        argv[a++] = b->ssh.identity;
    }
    if (f->known_hosts) {
        argv[a++] = "--known-hosts";
        argv[a++] = f->known_hosts;
    }
    if (f->capture) {
        argv[a++] = "--capture";
        argv[a++] = f->capture;
    }
    if (f->html)
        argv[a++] = "--html";
    argv[a++] = "-f";
    argv[a++] = "-o";
    argv[a++] = out;
    argv[a++] = f->program;
    argv[a++] = "--";
    for (int i = 0; i < f->arg_count; i++)
        argv[a++] = f->args[i];
    argv[a] = NULL;
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execv(self, (char *const *)argv);
        _exit(127);
    }
    free(argv);
    return pid;
}

/* Ends the job's hold: the board's release file, over ssh (host key checked
 * against --known-hosts when given). */
static int release(const struct farm *f, const struct board *b)
{
    char port[16], dest[320], cmd[256], known[PATH_MAX + 32];
    snprintf(port, sizeof port, "%d", b->ssh.port);
    snprintf(dest, sizeof dest, "%s@%s", b->ssh.user, b->ssh.host);
    snprintf(cmd, sizeof cmd,
             "echo %s %s %s >/tmp/boardtrace-release.new && "
             "mv /tmp/boardtrace-release.new /tmp/boardtrace-release",
             b->status == 0 ? "pass" : "fail", b->zones[0] ? b->zones : "0",
             b->frames[0] ? b->frames : "0");
    snprintf(known, sizeof known, "UserKnownHostsFile=%s", f->known_hosts ? f->known_hosts : "");
    const char *argv[24];
    int a = 0;
    argv[a++] = "ssh";
    argv[a++] = "-o";
    argv[a++] = "BatchMode=yes";
    argv[a++] = "-o";
    argv[a++] = "StrictHostKeyChecking=yes";
    argv[a++] = "-o";
    argv[a++] = "ConnectTimeout=30";
    if (f->known_hosts) {
        argv[a++] = "-o";
        argv[a++] = known;
    }
    if (b->ssh.identity[0]) {
        argv[a++] = "-i";
        argv[a++] = b->ssh.identity;
    }
    argv[a++] = "-p";
    argv[a++] = port;
    argv[a++] = dest;
    argv[a++] = cmd;
    argv[a] = NULL;
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open("/dev/null", O_RDWR);
        if (fd >= 0) {
            dup2(fd, 0);
            dup2(fd, 1);
        }
        execvp("ssh", (char *const *)argv);
        _exit(127);
    }
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) < 0)
        return -1;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static int write_job(const struct farm *f, const char *path)
{
    FILE *out = fopen(path, "w");
    if (!out) {
        btd_error("farm: writing %s: %s", path, strerror(errno));
        return -1;
    }
    const char *base = strrchr(f->program, '/');
    char tags[FARM_MAX_TAGS * 260 + 16] = "";
    for (int i = 0; i < f->tag_count; i++) {
        size_t len = strlen(tags);
        snprintf(tags + len, sizeof tags - len, "%s'%s'", i ? ", " : "tags: [", f->tags[i]);
    }
    if (f->tag_count)
        strcat(tags, "]\n");
    fprintf(out, hold_job, f->device_type, tags, base ? base + 1 : f->program, f->hold_minutes + 15,
            f->hold_minutes, f->hold_minutes);
    return fclose(out) == 0 ? 0 : -1;
}

/* A running job that LAVA ends (cancelled there, or its board lost) stops
 * its run, once: the run stops the program and pulls what arrived. */
static void watch_running(const struct btd_lava *l, struct board *b)
{
    if (b->ended || btd_now() < b->next_check)
        return;
    b->next_check = btd_now() + FARM_JOB_CHECK_SECONDS;
    if (btd_lava_job_show(l, b->job, &b->lava) != 0 || strcmp(b->lava.state, "Running") == 0)
        return;
    btd_warn("farm: LAVA says job %ld on %s is %s (%s): stopping its run", b->job, b->lava.device,
             b->lava.state, b->lava.health);
    b->ended = 1;
    kill(b->run, SIGINT);
}

/* One step of a board's life, polled. */
static void advance(const struct farm *f, const struct btd_lava *l, struct board *b,
                    double deadline)
{
    if (b->step == WAITING) {
        if (btd_lava_job_show(l, b->job, &b->lava) != 0)
            return;
        if (strcmp(b->lava.state, "Finished") == 0 || strcmp(b->lava.state, "Canceling") == 0) {
            snprintf(b->failure, sizeof b->failure, "job ended before its board was ready (%s)",
                     b->lava.health);
            b->step = DONE;
            return;
        }
        if (btd_now() > deadline) {
            snprintf(b->failure, sizeof b->failure, "no board ready within %d s", f->ready_timeout);
            btd_lava_cancel(l, b->job);
            b->step = RELEASED;
            return;
        }
        if (strcmp(b->lava.state, "Running") != 0 ||
            btd_lava_case_passed(l, b->job, "0_boardtrace", "board-ready") != 1)
            return;
        if (!device_name_ok(b->lava.device)) {
            snprintf(b->failure, sizeof b->failure, "device name '%s' unusable as a file name",
                     b->lava.device);
            btd_lava_cancel(l, b->job);
            b->step = RELEASED;
            return;
        }
        if (btd_lava_device_ssh(l, b->lava.device, &b->ssh) != 0) {
            snprintf(b->failure, sizeof b->failure, "no ssh address in its device dictionary");
            btd_lava_cancel(l, b->job);
            b->step = RELEASED;
            return;
        }
        /* LAVA may give one device two of these jobs, one after the other. */
        snprintf(b->name, sizeof b->name, "%s", b->lava.device);
        for (int i = 0; i < f->board_count; i++)
            if (&f->boards[i] != b && strcmp(f->boards[i].name, b->name) == 0)
                snprintf(b->name, sizeof b->name, "%s-%ld", b->lava.device, b->job);
        btd_note("farm: job %ld holds %s (%s@%s:%d): profiling", b->job, b->lava.device,
                 b->ssh.user, b->ssh.host, b->ssh.port);
        b->started = btd_now();
        b->run = start_run(f, b);
        b->step = RUNNING;
        if (b->run < 0) {
            snprintf(b->failure, sizeof b->failure, "could not start boardtrace run");
            b->status = -1;
            release(f, b);
            b->step = RELEASED;
        }
    } else if (b->step == RUNNING) {
        int status;
        pid_t r = waitpid(b->run, &status, WNOHANG);
        if (r != b->run) {
            watch_running(l, b);
            return;
        }
        b->seconds = btd_now() - b->started;
        b->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        char record[PATH_MAX];
        snprintf(record, sizeof record, "%s/%s.tracy.json", f->out_dir, b->name);
        read_record(record, b);
        if (b->status != 0)
            snprintf(b->failure, sizeof b->failure, "boardtrace run: exit %d (%s), see %s/%s.log",
                     b->status, btd_exit_step(b->status), f->out_dir, b->name);
        /* A stopped run keeps the trace of what arrived, if any did. */
        char trace[PATH_MAX];
        snprintf(trace, sizeof trace, "%s/%s.tracy", f->out_dir, b->name);
        int kept = access(trace, F_OK) == 0;
        char why[128];
        if (interrupted)
            snprintf(why, sizeof why, "interrupted: the job was cancelled and the run stopped");
        else
            snprintf(why, sizeof why,
                     "LAVA ended the job (%s) while the run went on: the run "
                     "was stopped",
                     b->lava.state);
        if (b->ended)
            snprintf(b->failure, sizeof b->failure, "%s; %s %s/%s.%s", why,
                     kept ? "what arrived is in" : "nothing arrived, see", f->out_dir, b->name,
                     kept ? "tracy" : "log");
        if (!b->ended && release(f, b) != 0) {
            btd_warn("farm: could not release job %ld over ssh: cancelling it", b->job);
            btd_lava_cancel(l, b->job);
        }
        b->step = RELEASED;
    } else if (b->step == RELEASED) {
        if (btd_lava_job_show(l, b->job, &b->lava) == 0 && strcmp(b->lava.state, "Finished") == 0)
            b->step = DONE;
    }
}

static void summary(const struct farm *f, const struct btd_lava *l, struct board *b, int n)
{
    printf("%-16s %6s  %-40s %6s %10s %8s %8s  %s\n", "device", "job", "link", "exit", "zones",
           "frames", "time", "LAVA");
    for (int i = 0; i < n; i++) {
        char link[600], exit_s[16], secs[32];
        snprintf(link, sizeof link, "%s/scheduler/job/%ld", l->url, b[i].job);
        if (b[i].status >= 0)
            snprintf(exit_s, sizeof exit_s, "%d", b[i].status);
        else
            snprintf(exit_s, sizeof exit_s, "-");
        snprintf(secs, sizeof secs, "%.1f s", b[i].seconds);
        printf("%-16s %6ld  %-40s %6s %10s %8s %8s  %s\n",
               b[i].lava.device[0] ? b[i].lava.device : "-", b[i].job, link, exit_s,
               b[i].zones[0] ? b[i].zones : "-", b[i].frames[0] ? b[i].frames : "-", secs,
               b[i].lava.health[0] ? b[i].lava.health : "-");
    }
    for (int i = 0; i < n; i++)
        if (b[i].failure[0])
            printf("job %ld (%s): %s\n", b[i].job, b[i].lava.device[0] ? b[i].lava.device : "-",
                   b[i].failure);
    /* The spread across the boards that gave a trace (a stopped run's
     * partial one too). */
    int traces = 0;
    for (int i = 0; i < n; i++) {
        char trace[PATH_MAX];
        snprintf(trace, sizeof trace, "%s/%s.tracy", f->out_dir, b[i].name);
        traces += b[i].name[0] && access(trace, F_OK) == 0;
    }
    if (traces >= 2) {
        printf("\nThe spread across the boards (boardtrace-report boards %s):\n", f->out_dir);
        btd_report_boards(f->out_dir, FARM_SPREAD_TOP);
    }
}

int btd_farm_main(int argc, char **argv)
{
    struct farm f;
    int rc = parse(argc, argv, &f);
    if (rc != 0)
        return rc == 1 ? BTD_EXIT_OK : rc;
    struct btd_lava l;
    rc = btd_lava_open(&l, f.lava);
    if (rc != 0) {
        btd_lava_close(&l);
        return rc;
    }
    if (mkdir(f.out_dir, 0755) != 0 && errno != EEXIST) {
        btd_error("farm: -o %s: %s", f.out_dir, strerror(errno));
        btd_lava_close(&l);
        return BTD_EXIT_OUTPUT;
    }
    char job_path[PATH_MAX];
    snprintf(job_path, sizeof job_path, "%s/lava-job.yaml", f.out_dir);
    struct board boards[FARM_MAX_BOARDS];
    memset(boards, 0, sizeof boards);
    int submitted = 0;
    f.boards = boards;
    rc = BTD_EXIT_OK;
    if (write_job(&f, job_path) != 0) {
        rc = BTD_EXIT_OUTPUT;
        goto out;
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    for (; submitted < f.count && !interrupted; submitted++) {
        boards[submitted].status = -1;
        if (btd_lava_submit(&l, job_path, &boards[submitted].job) != 0) {
            rc = BTD_EXIT_CONNECT;
            break;
        }
        btd_note("farm: submitted job %ld (%s/scheduler/job/%ld)", boards[submitted].job, l.url,
                 boards[submitted].job);
    }
    if (submitted == 0)
        goto out;
    f.board_count = submitted;
    double deadline = btd_now() + f.ready_timeout;
    double cancel_deadline = 0;
    for (;;) {
        int done = 0;
        /* Ctrl-C: each run stops and keeps what arrived (it saves a partial
         * trace on SIGINT), every run at once; then LAVA cancels every job,
         * one lavacli call each. */
        for (int i = 0; interrupted && !cancel_deadline && i < submitted; i++)
            if (boards[i].step == RUNNING && !boards[i].ended)
                kill(boards[i].run, SIGINT);
        for (int i = 0; interrupted && !cancel_deadline && i < submitted; i++) {
            if (boards[i].step != DONE)
                btd_lava_cancel(&l, boards[i].job);
            boards[i].ended = 1;
            if (boards[i].step == WAITING) {
                snprintf(boards[i].failure, sizeof boards[i].failure, "interrupted");
                boards[i].step = RELEASED;
            }
        }
        if (interrupted && !cancel_deadline)
            cancel_deadline = btd_now() + FARM_CANCEL_SECONDS;
        /* The runs that ended first (no lavacli call), so a board is released
         * as soon as its run ends; then the others. A lavacli call can take
         * many seconds on a loaded host: Ctrl-C in between goes straight to
         * stopping the runs above, not after every board's call. */
        int fresh_interrupt = 0;
        for (int i = 0; i < submitted && !fresh_interrupt; i++) {
            if (boards[i].step == RUNNING)
                advance(&f, &l, &boards[i], deadline);
            fresh_interrupt = interrupted && !cancel_deadline;
        }
        for (int i = 0; i < submitted && !fresh_interrupt; i++) {
            if (boards[i].step != RUNNING)
                advance(&f, &l, &boards[i], deadline);
            done += boards[i].step == DONE;
            fresh_interrupt = interrupted && !cancel_deadline;
        }
        if (fresh_interrupt)
            continue;
        if (done == submitted)
            break;
        if (cancel_deadline && btd_now() > cancel_deadline) {
            btd_warn("farm: LAVA did not end every cancelled job within %.0f s",
                     FARM_CANCEL_SECONDS);
            break;
        }
        struct timespec ts = {1, 0};
        nanosleep(&ts, NULL);
    }
    for (int i = 0; i < submitted; i++) {
        struct board *b = &boards[i];
        /* A run that passed, on a job LAVA did not complete, is no result. */
        if (b->status == 0 && strcmp(b->lava.health, "Complete") != 0 && !b->failure[0])
            snprintf(b->failure, sizeof b->failure, "LAVA's job ended %s",
                     b->lava.health[0] ? b->lava.health : "unfinished");
        if (rc != BTD_EXIT_OK)
            continue;
        if (b->status != 0 && !b->ended)
            rc = b->status > 0 ? b->status : BTD_EXIT_CONNECT;
        else if (b->failure[0])
            rc = BTD_EXIT_CONNECT;
    }
    summary(&f, &l, boards, submitted);
    if (interrupted)
        rc = BTD_EXIT_INTERRUPTED;
out:
    btd_lava_close(&l);
    return rc;
}
