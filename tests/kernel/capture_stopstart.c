// SPDX-License-Identifier: GPL-2.0
/*
 * The capture contract at both ends, measured from outside as a user would:
 * start 'ktrackctl trace|record SPEC', wait only for its "probe ... armed"
 * line, make exactly N calls of the probed function on every CPU, and stop
 * at once (SIGINT, SIGTERM, the -d duration, or --count).  Every iteration must show
 * N of N records and 0 lost: a line that says "armed" means recording has
 * begun, and every record produced before the stop is delivered.
 *
 * The callers are threads named "ktstress" pinned one per CPU, so records of
 * other tasks that happen to call getppid() are not counted.
 *
 *   KTRACK_STRESS_ITERS   iterations of the main case (trace, SIGINT); the
 *                         others run a quarter of it.  Default 200, as
 *                         'make check-stress' runs it; 'make check' runs 20.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>

#include "kselftest_harness.h"
#include "ktrack_test.h"

#define CALLS_PER_CPU 250
#define SPEC "p:sd __x64_sys_getppid comm=$comm"
/* An alias that 6.1 leaves out of available_filter_functions (its
 * __do_sys_getppid has the same address): the same spec on both kernels.
 */
#define FSPEC "f:sd __x64_sys_getppid comm=$comm"

enum stop_cause { STOP_SIGINT, STOP_SIGTERM, STOP_DURATION, STOP_COUNT };

struct caller {
	pthread_t th;
	int cpu;
	pthread_barrier_t *go;
};

static void *call_getppid(void *arg)
{
	struct caller *c = arg;
	cpu_set_t set;
	int i;

	CPU_ZERO(&set);
	CPU_SET(c->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	prctl(PR_SET_NAME, "ktstress");
	pthread_barrier_wait(c->go);
	for (i = 0; i < CALLS_PER_CPU; i++)
		syscall(SYS_getppid);
	return NULL;
}

/* N calls in all: CALLS_PER_CPU on each online CPU, at the same time. */
static int make_calls(void)
{
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN), i;
	struct caller c[64];
	pthread_barrier_t go;

	if (ncpu > 64)
		ncpu = 64;
	pthread_barrier_init(&go, NULL, ncpu);
	for (i = 0; i < ncpu; i++) {
		c[i].cpu = i;
		c[i].go = &go;
		pthread_create(&c[i].th, NULL, call_getppid, &c[i]);
	}
	for (i = 0; i < ncpu; i++)
		pthread_join(c[i].th, NULL);
	pthread_barrier_destroy(&go);
	return ncpu * CALLS_PER_CPU;
}

/* Reads the child's stderr until a line has 'what' (or EOF); keeps all of it. */
static int read_until(int fd, char *buf, size_t len, size_t *used, const char *what)
{
	while (!strstr(buf, what)) {
		ssize_t n = read(fd, buf + *used, len - 1 - *used);

		if (n <= 0)
			return -1;
		*used += n;
		buf[*used] = 0;
	}
	return 0;
}

static int count_lines(const char *path, const char *needle)
{
	char line[1024];
	FILE *f = fopen(path, "r");
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, needle))
			n++;
	fclose(f);
	return n;
}

/* The lost count of the summary line ("trace: N records, M lost, ..." or
 * "recorded N events (SIZE), M lost, ..."); ~0 when there is none.
 */
static unsigned long summary_lost(const char *err)
{
	unsigned long n, lost;
	const char *p;

	p = strstr(err, "trace: ");
	if (p && sscanf(p, "trace: %lu records, %lu lost", &n, &lost) == 2)
		return lost;
	p = strstr(err, "recorded ");
	if (p && sscanf(p, "recorded %lu events (%*[^)]), %lu lost", &n, &lost) == 2)
		return lost;
	return ~0UL;
}

/*
 * One iteration; returns 0 when N of N records arrived with 0 lost, else
 * explains in 'why'.
 */
static int one_run(int record, enum stop_cause stop, const char *spec, char *why, size_t whylen)
{
	char out[] = "/tmp/kt-stopstart.out", file[] = "/tmp/kt-stopstart.ktrack";
	char err[16384] = "", cmd[PATH_MAX + 256];
	size_t used = 0;
	int pipefd[2], status, want, got;
	pid_t pid;

	unlink(file);
	if (pipe2(pipefd, O_CLOEXEC))
		return snprintf(why, whylen, "pipe: %s", strerror(errno)), -1;
	pid = fork();
	if (pid == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		const char *argv[16];
		int a = 0;
		char count[16];

		dup2(o, 1);
		dup2(pipefd[1], 2);
		argv[a++] = "ktrackctl";
		argv[a++] = record ? "record" : "trace";
		if (record) {
			argv[a++] = "-o";
			argv[a++] = file;
		}
		argv[a++] = "--buffer-pages";
		argv[a++] = "256";
		if (stop == STOP_DURATION) {
			argv[a++] = "-d";
			argv[a++] = "4s";
		} else if (stop == STOP_COUNT) {
			snprintf(count, sizeof(count), "%d", CALLS_PER_CPU);
			argv[a++] = "--count";
			argv[a++] = count;
		}
		argv[a++] = spec;
		argv[a] = NULL;
		execv(kt_ktrackctl(), (char **)argv);
		_exit(127);
	}
	close(pipefd[1]);
	if (read_until(pipefd[0], err, sizeof(err), &used, ", armed")) {
		waitpid(pid, &status, 0);
		close(pipefd[0]);
		return snprintf(why, whylen, "no armed line; stderr: %s", err), -1;
	}
	want = make_calls();
	if (stop == STOP_COUNT)
		want = CALLS_PER_CPU;	/* exactly that many shown, the rest counted */
	else if (stop != STOP_DURATION)
		kill(pid, stop == STOP_SIGINT ? SIGINT : SIGTERM);
	/* the rest of stderr: the summary */
	while (used < sizeof(err) - 1) {
		ssize_t n = read(pipefd[0], err + used, sizeof(err) - 1 - used);

		if (n <= 0)
			break;
		used += n;
		err[used] = 0;
	}
	close(pipefd[0]);
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return snprintf(why, whylen, "exit status 0x%x; stderr: %s", status, err), -1;
	if (record) {
		snprintf(cmd, sizeof(cmd), "%s report %s > %s", kt_ktrackctl(), file, out);
		if (system(cmd))
			return snprintf(why, whylen, "report failed; stderr: %s", err), -1;
	}
	got = count_lines(out, "comm=\"ktstress\"");
	if (got != want || summary_lost(err) != 0)
		return snprintf(why, whylen, "%d of %d records, summary lost %lu; stderr: %s", got,
				want, summary_lost(err), err), -1;
	return 0;
}

static int iterations(void)
{
	const char *e = getenv("KTRACK_STRESS_ITERS");

	return e ? atoi(e) : 200;
}

FIXTURE(stopstart) {
	char out[4096];
};

FIXTURE_SETUP(stopstart)
{
	ASSERT_EQ(0, kt_run(self->out, sizeof(self->out), "%s load", kt_ktrackctl()))
		TH_LOG("ktrackctl load: %s", self->out);
}

FIXTURE_TEARDOWN(stopstart)
{
	kt_run(NULL, 0, "%s unload", kt_ktrackctl());
}

/* Each case runs many iterations; the first failure ends it, explained. */
static void run_spec(struct __test_metadata *_metadata, int record, enum stop_cause stop,
		     const char *spec, int iters)
{
	char why[20000];
	int i;

	for (i = 0; i < iters; i++) {
		if (one_run(record, stop, spec, why, sizeof(why))) {
			TH_LOG("iteration %d of %d: %s", i + 1, iters, why);
			ASSERT_TRUE(0);
		}
	}
}

static void run_case(struct __test_metadata *_metadata, int record, enum stop_cause stop,
		     int iters)
{
	run_spec(_metadata, record, stop, SPEC, iters);
}

TEST_F_TIMEOUT(stopstart, trace_sigint_every_call_recorded, 3600)
{
	run_case(_metadata, 0, STOP_SIGINT, iterations());
}

TEST_F_TIMEOUT(stopstart, trace_sigterm_every_call_recorded, 1800)
{
	run_case(_metadata, 0, STOP_SIGTERM, iterations() / 4);
}

TEST_F_TIMEOUT(stopstart, record_sigint_every_call_recorded, 1800)
{
	run_case(_metadata, 1, STOP_SIGINT, iterations() / 4);
}

TEST_F_TIMEOUT(stopstart, record_duration_every_call_recorded, 120)
{
	/* -d 4s: the calls are made at once, the duration ends the command */
	run_case(_metadata, 1, STOP_DURATION, 3);
}

TEST_F_TIMEOUT(stopstart, trace_count_shows_exactly_count, 600)
{
	/* --count N: exactly N shown, the command ends by itself */
	run_case(_metadata, 0, STOP_COUNT, iterations() / 4);
}

TEST_F_TIMEOUT(stopstart, fprobe_on_a_syscall_alias_every_call_recorded, 600)
{
	run_spec(_metadata, 0, STOP_SIGINT, FSPEC, 5);
}

TEST_HARNESS_MAIN
