/* The subcommands of cureduce-bench (main.c). Each returns the process exit status. */
#ifndef CUREDUCE_BENCH_COMMANDS_H
#define CUREDUCE_BENCH_COMMANDS_H

#ifdef __cplusplus
extern "C" {
#endif

int cmd_ladder(int argc, char **argv);     /* cmd_ladder.cu */
int cmd_bench(int argc, char **argv);      /* cmd_bench.cu */
int cmd_bench_rows(int argc, char **argv); /* cmd_bench_rows.cu */

#ifdef __cplusplus
}
#endif

/* The tool's name for messages. */
#define BENCH_NAME "cureduce-bench"

#endif
