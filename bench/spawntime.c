/* spawntime: whole-process start-up timer for bench/start.sh.
 * spawntime ROUNDS CMD [ARG...] ::: CMD [ARG...] ...
 * Runs the commands in turn, ROUNDS times each after 3 warm-up rounds, the
 * order reversed every round so the machine's drift hits all alike;
 * output to /dev/null. Per command: median and 10th percentile of the
 * wall time (spawn to reaped) and of the child's CPU (user+sys from
 * wait4), and the median count of minor page faults. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int cmp(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double pct(double *v, int n, double p) {
	qsort(v, n, sizeof *v, cmp);
	return v[(int)(p * (n - 1) + 0.5)];
}

int main(int argc, char **argv) {
	if (argc < 3) {
		fprintf(stderr, "usage: spawntime ROUNDS CMD [ARG...] [::: CMD [ARG...]]...\n");
		return 2;
	}
	int rounds = atoi(argv[1]), nc = 0;
	char **cmds[32];
	cmds[nc++] = &argv[2];
	for (int i = 2; i < argc && nc < 32; i++)
		if (!strcmp(argv[i], ":::")) {
			argv[i] = NULL;
			cmds[nc++] = &argv[i + 1];
		}
	double *wall[32], *cpu[32], *flt[32];
	for (int k = 0; k < nc; k++) {
		wall[k] = calloc(rounds, sizeof(double));
		cpu[k] = calloc(rounds, sizeof(double));
		flt[k] = calloc(rounds, sizeof(double));
	}
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	for (int r = -3; r < rounds; r++)
		for (int j = 0; j < nc; j++) {
			int k = (r & 1) ? nc - 1 - j : j;
			struct timespec t0, t1;
			struct rusage ru;
			int status;
			pid_t pid;
			clock_gettime(CLOCK_MONOTONIC, &t0);
			if (posix_spawn(&pid, cmds[k][0], &fa, NULL, cmds[k], environ)) {
				perror(cmds[k][0]);
				return 1;
			}
			wait4(pid, &status, 0, &ru);
			clock_gettime(CLOCK_MONOTONIC, &t1);
			if (r < 0)
				continue;
			wall[k][r] = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
			cpu[k][r] = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
				    (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
			flt[k][r] = ru.ru_minflt;
		}
	for (int k = 0; k < nc; k++)
		printf("%.3f %.3f %.3f %.3f %.0f\n", pct(wall[k], rounds, .5), pct(wall[k], rounds, .1),
		       pct(cpu[k], rounds, .5), pct(cpu[k], rounds, .1), pct(flt[k], rounds, .5));
	return 0;
}
