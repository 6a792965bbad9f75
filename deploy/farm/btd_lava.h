/* LAVA, the lab's scheduler, through its own client lavacli (run as a
 * subprocess, never through a shell): submitting, following and cancelling
 * jobs, and reading a device's ssh address from its device dictionary. The
 * token comes from lavacli's configuration or the environment, never from a
 * command line. */
#ifndef BTD_LAVA_H
#define BTD_LAVA_H

#include "btd_buf.h"

#include <limits.h>

struct btd_lava {
    char identity[128];         /* lavacli -i IDENTITY */
    char config_home[PATH_MAX]; /* XDG_CONFIG_HOME for lavacli; "" = the user's */
    char url[512];              /* the server, for links: http://host:port */
    int own_config;             /* config_home is ours, removed by btd_lava_close */
};

/* What lavacli says about a job: its state (Submitted, Scheduled, Running,
 * Canceling, Finished), health (Unknown, Complete, Incomplete, Canceled) and
 * device (empty until scheduled). */
struct btd_lava_job {
    char state[32];
    char health[32];
    char device[128];
};

/* A device's ssh address from its rendered device dictionary (LAVA's ssh
 * device type: ssh_host, ssh_port, ssh_user, ssh_identity_file). */
struct btd_lava_ssh {
    char host[256];
    int port;
    char user[64];
    char identity[PATH_MAX];
};

/* LAVA is a URL (http[s]://host[:port]; the token from LAVA_TOKEN and the
 * user from LAVA_USER, written to a private lavacli configuration) or the
 * name of an identity in lavacli's own configuration. Returns 0, or
 * BTD_EXIT_USAGE / BTD_EXIT_LOCAL after saying why. */
int btd_lava_open(struct btd_lava *l, const char *lava);
void btd_lava_close(struct btd_lava *l);

/* Runs lavacli with ARGS (NULL-terminated), its output (stdout and stderr)
 * in OUT. Returns its exit status, or -1 if it could not be run. */
int btd_lava_cli(const struct btd_lava *l, struct btd_buf *out, const char *const *args);

/* Submits the job definition in PATH; its id in *JOB. Returns 0, or -1 after
 * saying what lavacli said. */
int btd_lava_submit(const struct btd_lava *l, const char *path, long *job);

int btd_lava_job_show(const struct btd_lava *l, long job, struct btd_lava_job *out);

/* 1 when the job's test case SUITE/CASE recorded pass, else 0 (-1: error). */
int btd_lava_case_passed(const struct btd_lava *l, long job, const char *suite, const char *name);

int btd_lava_device_ssh(const struct btd_lava *l, const char *device, struct btd_lava_ssh *out);

int btd_lava_cancel(const struct btd_lava *l, long job);

#endif
